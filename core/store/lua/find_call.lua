-- A webhook call not sent, of a turn still pending, found in no list (the queue, any caller's
-- taken or fresh list) was lost: it is queued again (core/store/waits.py `requeue_if_lost`).
-- KEYS: the waiting hash, the log, the calls, then every caller's taken and fresh lists.
-- args: turn, item. 1 if it was queued again, else 0.
local waiting_key, log_key, calls = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])

if redis.call('LLEN', log_key) > args.turn or redis.call('HEXISTS', waiting_key, 'record') == 0
   or redis.call('HEXISTS', waiting_key, 'called_at') == 1 then
  return 0
end
for i = 3, #KEYS do
  if redis.call('LPOS', KEYS[i], args.item) then return 0 end
end
redis.call('RPUSH', calls, args.item)
return 1
