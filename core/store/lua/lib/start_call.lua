-- start_call(call): a pending webhook call is sent now — it leaves its caller's taken list, and
-- the bot's clock starts: the waiting record's called_at, the clock's deadline at call.lease —
-- unless its account has call.share calls in flight already (0: no share kept), over every
-- dispatcher: then it stays taken. call: waiting_key, deadlines_key, taken_key, share_key, now,
-- lease (when the call's lease ends: its deadline plus the slack), member ("{match}:{turn}"),
-- item (the call as queued), share. "sent" or "over".
local function start_call(call)
  if call.share > 0 then
    redis.call('ZREMRANGEBYSCORE', call.share_key, '-inf', call.now)
    if not redis.call('ZSCORE', call.share_key, call.member) and redis.call('ZCARD', call.share_key) >= call.share then
      return 'over'
    end
    redis.call('ZADD', call.share_key, call.lease, call.member)
  end
  redis.call('LREM', call.taken_key, 1, call.item)
  redis.call('HSET', call.waiting_key, 'called_at', call.now)
  redis.call('ZADD', call.deadlines_key, call.lease, call.member)
  return 'sent'
end
