-- start_match(match_key, started_at): a runner starts (or resumes) the match
-- (core/store/matches.py): its count of runs started goes up, and it is marked running (and
-- started at `started_at`, JSON) unless it is over or running already — one step, so a match an
-- admin stopped meanwhile is never marked running again.
-- attempts (the runs started, this one included), changed (1 if it was marked running now).
local function start_match(match_key, started_at)
  local attempts = redis.call('HINCRBY', match_key, 'attempts', 1)
  local status = redis.call('HGET', match_key, 'status')
  if status == '"finished"' or status == '"aborted"' or status == '"running"' then return attempts, 0 end
  redis.call('HSET', match_key, 'status', '"running"')
  local started = redis.call('HGET', match_key, 'started')
  if not started or started == 'null' then redis.call('HSET', match_key, 'started', started_at) end
  return attempts, 1
end
