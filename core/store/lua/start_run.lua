--! uses take_slots start_match
-- A continuation's start (core/store/runs.py `start_run`, its lock held), one step: what the run
-- reads — the match's status and archived mark, each seat's bot, the log from an entry on, the
-- waiting record, its tournament's status, reason and owner — then, only if the match is neither
-- missing nor over nor archived, nor its tournament stopping, its slots and, if they are taken,
-- its start.
-- KEYS: the match hash, its log, its waiting hash, its tournament's hash (the match hash again
-- for a match of no tournament), then each seat's bot's hash, then `take_slots`'s keys. args: bots
-- (how many seats' bots), fields (the bots' fields to read), stamps (each bot's stamp as this
-- process last read it, '' for none), since (the log's first entry to read), tournament (whether
-- the match has one), slots (`take_slots`'s), started_at (now, JSON), started (`start_match`'s).
-- {status, archived, bots, entries, waiting, full, attempts, changed, tournament}: a bot is {}
-- when its stamp (the sha1 of its fields) is the one given, else {stamp, fields...}; waiting is
-- the record ('' for none); full is -1 when the slots and start were not made; tournament is
-- {status, reason, owner} (each false when unset), {} for none.
local match_key, log_key, waiting_key, tournament_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local args = cjson.decode(ARGV[1])

local read = redis.call('HMGET', match_key, 'status', 'archived')
local status, archived = read[1], read[2]
local bots = {}
for i = 1, args.bots do
  local values, parts = redis.call('HMGET', KEYS[4 + i], unpack(args.fields)), {}
  for j = 1, #args.fields do
    local v = values[j] or ''
    parts[j] = (values[j] and #v or '-') .. ':' .. v
  end
  local stamp = redis.sha1hex(table.concat(parts))
  if stamp == args.stamps[i] then
    bots[i] = {}
  else
    table.insert(values, 1, stamp)
    bots[i] = values
  end
end
local entries = redis.call('LRANGE', log_key, args.since, -1)
local waiting = redis.call('HGET', waiting_key, 'record') or ''
local tournament = {}
if args.tournament then tournament = redis.call('HMGET', tournament_key, 'status', 'reason', 'owner') end
local stopping = tournament[1] == '"aborting"' or tournament[1] == '"aborted"'
if not status or archived or status == '"finished"' or status == '"aborted"' or stopping then
  return {status, archived, bots, entries, waiting, -1, 0, 0, tournament}
end
local full = take_slots({unpack(KEYS, 5 + args.bots)}, args.slots)
if full > 0 then return {status, archived, bots, entries, waiting, full, 0, 0, tournament} end
local attempts, changed = start_match(match_key, args.started_at, args.started)
return {status, archived, bots, entries, waiting, 0, attempts, changed, tournament}
