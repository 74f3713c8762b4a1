--! uses take_slots start_match
-- A match runner's start (core/store/matches.py `take_slots_and_start`): the slots of its bots
-- and, only if they are taken, the start with what follows it.
-- KEYS: the match hash, then `take_slots`'s keys. args: slots (`take_slots`'s), started_at,
-- started (`start_match`'s, or absent).
-- {full, attempts, changed}: {i, 0, 0} when bot i is full (the match is not started).
local args = cjson.decode(ARGV[1])
local full = take_slots({unpack(KEYS, 2)}, args.slots)
if full > 0 then return {full, 0, 0} end
local attempts, changed = start_match(KEYS[1], args.started_at, args.started)
return {0, attempts, changed}
