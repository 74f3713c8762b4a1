-- The settling of a remote turn (core/store/waits.py `settle`): its entry appended with the
-- log's check and, only if it landed, the turn's deadline, its call's share of its account and
-- its pending decision gone, its debug note kept, and the match active, its next run in hand
-- for next_run_ms (an RQ job the caller enqueues once this returns 1, or a turn it publishes:
-- the recovery sweep leaves the match alone meanwhile).
-- KEYS: the log, the match hash, its events channel, the deadlines, the account's share, the
-- match's debug notes, the bot's pending decisions, the active set, the next run's hold.
-- args: turn, entry (its JSON), member ("{match}:{turn}"), shared (the call held a share of its
-- account), debug_field and debug_note ("" for none), polling (the turn is a polling bot's pending
-- decision), active_member ("match:{id}"), next_run_ms.
-- 1 if the entry landed (the log held exactly `turn` entries and the match is not over), else 0.
local log_key, match_key, channel, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local share_key, debug_key, decisions_key, active_key = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local next_run = KEYS[9]
local args = cjson.decode(ARGV[1])

local status = redis.call('HGET', match_key, 'status')
if not status or status == '"finished"' or status == '"aborted"'
   or redis.call('LLEN', log_key) ~= args.turn then
  return 0
end
redis.call('RPUSH', log_key, args.entry)
redis.call('PUBLISH', channel, args.turn + 1)

redis.call('ZREM', deadlines, args.member)
if args.shared then redis.call('ZREM', share_key, args.member) end
if args.debug_field ~= '' then redis.call('HSET', debug_key, args.debug_field, args.debug_note) end
if args.polling then redis.call('HDEL', decisions_key, args.member) end
redis.call('SADD', active_key, args.active_member)
redis.call('SET', next_run, 1, 'PX', args.next_run_ms)
return 1
