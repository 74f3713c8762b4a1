--! uses credited pending
-- A bot's own read of its pending decisions (core/store/decisions.py `pending_texts`), after
-- its credential's check. KEYS[1] the bot's hash, KEYS[2] its decisions; args: credential
-- (`credited`'s), around (`LOG_KEY_AROUND`), skip (fields the bot holds: left out).
-- `pending`'s reply, or 'not credited'.
local bot, decisions = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
if not credited(bot, args.credential) then return 'not credited' end
return pending(decisions, args.around, args.skip)
