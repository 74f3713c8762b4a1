-- start_match(match_key, started_at, started): a runner starts (or resumes) the match
-- (core/store/matches.py): its count of runs started goes up, and it is marked running (and
-- started at `started_at`, JSON) unless it is over or running already — one step, so a match an
-- admin stopped meanwhile is never marked running again. `started` (or nil: the caller does it
-- after) is what follows a start that marked it running (matches.py `match_started`): {match = its
-- id, queued = its owner's set of queued matches (absent without an owner), publish = {{channel,
-- message}, ...} (core/store/events.py `status_messages`)}.
-- attempts (the runs started, this one included), changed (1 if it was marked running now).
local function start_match(match_key, started_at, started)
  local attempts = redis.call('HINCRBY', match_key, 'attempts', 1)
  local status = redis.call('HGET', match_key, 'status')
  if status == '"finished"' or status == '"aborted"' or status == '"running"' then return attempts, 0 end
  redis.call('HSET', match_key, 'status', '"running"')
  local begun = redis.call('HGET', match_key, 'started')
  if not begun or begun == 'null' then redis.call('HSET', match_key, 'started', started_at) end
  if started then
    if started.queued then redis.call('SREM', started.queued, started.match) end
    for _, message in ipairs(started.publish) do redis.call('PUBLISH', message[1], message[2]) end
  end
  return attempts, 1
end
