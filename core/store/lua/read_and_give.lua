--! uses pending live
-- A woken long-poll's read (core/store/decisions.py `wait_texts`): what is pending and, if a
-- decision may be live (the poll ends with it), the poll's places given back and, when `seen`
-- is not empty, the bot noted seen then. KEYS[1] the bot's decisions, KEYS[2] the bot's hash,
-- then the places' sorted sets; args: around (`LOG_KEY_AROUND`), skip (fields the bot holds:
-- left out), now (epoch ms), seen (now as the bot's hash holds it, `stored_stamp`, or ''),
-- token (the places'). {1 if the places were given back else 0, pending}.
local decisions, bot = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
local out = pending(decisions, args.around, args.skip)
if not live(out, args.now) then return {0, out} end
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], args.token) end
if args.seen ~= '' then redis.call('HSET', bot, 'last_seen', args.seen) end
return {1, out}
