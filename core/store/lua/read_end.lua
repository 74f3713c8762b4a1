--! uses release_and_wake
-- What a match's end reads for its follow-ups (core/store/runs.py `read_end`) and, if asked, its
-- slots given back (core/store/slots.py `release_step`), in one step.
-- KEYS: the match's waiting hash, each rotation's match hash (args.twins of them), then if
-- args.tournament its tournament's hash and done set, then `release_and_wake`'s keys.
-- args: twins, tournament (whether it has one), release (`release_and_wake`'s args, absent for none).
-- {woken, waiting (its fields and values, flat), statuses, tournament ({status, total, done}: {}
-- for none)}: a status is false where the match is missing.
local args = cjson.decode(ARGV[1])
local woken = {}
local tail = 2 + args.twins + (args.tournament and 2 or 0)
if args.release then woken = release_and_wake({unpack(KEYS, tail)}, args.release) end
local waiting = redis.call('HGETALL', KEYS[1])
local statuses = {}
for i = 1, args.twins do statuses[i] = redis.call('HGET', KEYS[1 + i], 'status') end
local tournament = {}
if args.tournament then
  local read = redis.call('HMGET', KEYS[2 + args.twins], 'status', 'total')
  tournament = {read[1], read[2], redis.call('SCARD', KEYS[3 + args.twins])}
end
return {woken, waiting, statuses, tournament}
