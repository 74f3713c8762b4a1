--! uses credited
-- A polling bot's answer's reads (core/store/decisions.py `answer_reads`), after its
-- credential's check. KEYS[1] the bot's hash, KEYS[2] its decisions, KEYS[3] a hash read with
-- them (the match's waiting hash); args: credential (`credited`'s), field (the decision's
-- "{match}:{turn}"). {1 if the decision is pending else 0, the hash's fields and values}, or
-- 'not credited'.
local bot, decisions, also = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])
if not credited(bot, args.credential) then return 'not credited' end
return {redis.call('HEXISTS', decisions, args.field), redis.call('HGETALL', also)}
