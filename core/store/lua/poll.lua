--! uses credited pending live take
-- A long-poll's first step (core/store/decisions.py `pending_or_poll_places`), after its
-- credential's check: what is pending and, only if no decision may be live, its places.
-- KEYS[1] the bot's hash, KEYS[2] its decisions, then the places' sorted sets; args: credential
-- (`credited`'s), around (`LOG_KEY_AROUND`), skip (fields the bot holds: left out), now (epoch
-- ms), places (`take`'s). {-1, pending} when a decision may be live (no place is taken: the poll
-- does not wait), else {`take`'s reply, pending}; or 'not credited'.
local bot, decisions = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
if not credited(bot, args.credential) then return 'not credited' end
local out = pending(decisions, args.around, args.skip)
if live(out, args.now) then return {-1, out} end
return {take({unpack(KEYS, 3)}, args.places), out}
