-- A run of a match ends asking a remote bot (core/store/waits.py `end_run_asking`): the decision
-- published, unless a run before this one published it — the match's waiting record, the turn's
-- deadline, and a pending decision for a polling bot (its long-polls woken) or a call to make
-- for a webhook — and the run's clean end: the count of runs started without ending, which
-- aborts a crash loop (core/store/matches.py `start_match`), starts again.
-- KEYS: the waiting hash, the deadlines, the polling bot's decisions or the calls, the polling
-- bot's wake channel, the match hash.
-- args: kind ("polling", "webhook", or "" when the decision is published already), record (the
-- waiting record's JSON), judge_at (when the clock judges the turn, epoch ms), member
-- ("{match}:{turn}"), item (the pending decision's record, or the call to queue).
-- 1, or 0 if the match is archived (over: nothing is published).
local waiting_key, deadlines, list_key, wake, match_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local args = cjson.decode(ARGV[1])

if redis.call('HEXISTS', match_key, 'archived') == 1 then return 0 end
if args.kind ~= '' then
  redis.call('DEL', waiting_key)
  redis.call('HSET', waiting_key, 'record', args.record)
  redis.call('ZADD', deadlines, args.judge_at, args.member)
  if args.kind == 'polling' then
    redis.call('HSET', list_key, args.member, args.item)
    redis.call('PUBLISH', wake, args.member)
  else
    redis.call('RPUSH', list_key, args.item)
  end
end
redis.call('HSET', match_key, 'attempts', 0)
return 1
