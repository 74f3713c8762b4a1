-- The dispatcher's clock claims the deadlines due (core/store/waits.py `claim_due_and_next`): by
-- removal, so of several dispatchers' clocks exactly one judges each; and the earliest deadline
-- left, so that a clock's look is one round trip.
-- KEYS: the deadlines. args: now (epoch ms), limit (how many at most).
-- {the claimed members, the earliest deadline left (its score) or false}.
local deadlines = KEYS[1]
local args = cjson.decode(ARGV[1])

local due = redis.call('ZRANGEBYSCORE', deadlines, '-inf', args.now, 'LIMIT', 0, args.limit)
if #due > 0 then redis.call('ZREM', deadlines, unpack(due)) end
local first = redis.call('ZRANGE', deadlines, 0, 0, 'WITHSCORES')
return {due, first[2] or false}
