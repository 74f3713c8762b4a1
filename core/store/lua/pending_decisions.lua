--! uses pending
-- A bot's pending decisions, each with its match's log length (core/store/decisions.py
-- `pending_decisions`, `wait_decisions`). KEYS[1] the bot's decisions; args: around
-- (`LOG_KEY_AROUND`), skip (fields left out). `pending`'s reply.
local decisions = KEYS[1]
local args = cjson.decode(ARGV[1])
return pending(decisions, args.around, args.skip)
