-- A remote bot's turn published (core/store/waits.py `end_run_asking`), by the run of the match
-- that reached it or by the settler of the turn before it (core/play_on.py): the match's waiting
-- record, the turn's deadline, and a pending decision for a polling bot (its long-polls woken)
-- or a call to make for a webhook. A turn is published once: only on a log of exactly `turn`
-- entries, of a match not over, whose waiting record is for an earlier turn. A run's end also
-- starts again the count of runs started without ending, which aborts a crash loop
-- (core/store/matches.py `start_match`).
-- KEYS: the waiting hash, the deadlines, the polling bot's decisions or the calls, the polling
-- bot's wake channel, the match hash, the log.
-- args: kind ("polling", "webhook", or "" when the decision is published already), turn, judge_at
-- (when the clock judges the turn, epoch ms), member ("{match}:{turn}"), run_ends (a run of the
-- match ends here); ARGV[2] the waiting record's JSON and ARGV[3] the pending decision's record
-- or the call to queue, outside the JSON table: they hold the decision, the bulk, as JSON text
-- already, which is stored as it is.
-- 1 if the turn was published (or `kind` is ""), 0 if it was not: the match is over or
-- archived, its log is not `turn` entries long, or the turn is published already.
local waiting_key, deadlines, list_key, wake, match_key, log_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local args, record, item = cjson.decode(ARGV[1]), ARGV[2], ARGV[3]

if redis.call('HEXISTS', match_key, 'archived') == 1 then return 0 end
local published = 1
if args.kind ~= '' then
  local status = redis.call('HGET', match_key, 'status')
  local asked = tonumber(redis.call('HGET', waiting_key, 'turn') or '-1')
  if not status or status == '"finished"' or status == '"aborted"'
     or redis.call('LLEN', log_key) ~= args.turn or asked >= args.turn then
    published = 0
  else
    redis.call('DEL', waiting_key)
    redis.call('HSET', waiting_key, 'record', record, 'turn', args.turn)
    redis.call('ZADD', deadlines, args.judge_at, args.member)
    if args.kind == 'polling' then
      redis.call('HSET', list_key, args.member, item)
      redis.call('PUBLISH', wake, args.member)
    else
      redis.call('RPUSH', list_key, item)
    end
  end
end
if args.run_ends then redis.call('HSET', match_key, 'attempts', 0) end
return published
