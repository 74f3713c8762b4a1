-- Consecutive log entries appended, all or none (core/store/matches.py `append_entries`): only
-- if the match is not over and its log holds exactly `first_turn` entries; its watchers are
-- told the log's new length.
-- KEYS[1] the log, KEYS[2] the match hash, KEYS[3] its events channel; args: first_turn,
-- entries (each its JSON text, as stored). 1 if they landed, else 0.
local log, match, channel = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])
local status = redis.call('HGET', match, 'status')
if not status or status == '"finished"' or status == '"aborted"' then return 0 end
if redis.call('LLEN', log) ~= args.first_turn then return 0 end
for _, entry in ipairs(args.entries) do redis.call('RPUSH', log, entry) end
redis.call('PUBLISH', channel, redis.call('LLEN', log))
return 1
