-- A webhook call the platform could not make goes back in the queue, its clock not started and
-- its account's share given back (core/store/waits.py `call_unstarted`).
-- KEYS: the waiting hash, the log, the deadlines, the calls, the account's share.
-- args: turn, check_at (when the clock looks at it again, epoch ms), member, item.
-- 1, or 0 if the turn is no longer pending.
local waiting_key, log_key, deadlines, calls, share_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local args = cjson.decode(ARGV[1])

redis.call('ZREM', share_key, args.member)
if redis.call('LLEN', log_key) > args.turn or redis.call('HEXISTS', waiting_key, 'record') == 0 then
  return 0
end
redis.call('HDEL', waiting_key, 'called_at')
redis.call('ZADD', deadlines, args.check_at, args.member)
redis.call('RPUSH', calls, args.item)
return 1
