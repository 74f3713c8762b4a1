--! uses start_call
-- A dispatcher's caller sends a webhook call now (core/store/waits.py `start_call`).
-- KEYS: the waiting hash, the log, the deadlines, the caller's taken list, the account's share.
-- args: turn, now (epoch ms), lease (when the call's lease ends), member, item, share (0: none
-- kept). "gone" if the turn is no longer pending (the call leaves the taken list), else
-- `start_call`'s "sent" or "over".
local waiting_key, log_key, deadlines_key, taken_key, share_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local args = cjson.decode(ARGV[1])

if redis.call('LLEN', log_key) > args.turn or redis.call('HEXISTS', waiting_key, 'record') == 0 then
  redis.call('LREM', taken_key, 1, args.item)
  return 'gone'
end
return start_call({waiting_key = waiting_key, deadlines_key = deadlines_key, taken_key = taken_key,
                   share_key = share_key, now = args.now, lease = args.lease, member = args.member,
                   item = args.item, share = args.share})
