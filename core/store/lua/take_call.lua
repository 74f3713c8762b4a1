--! uses start_call prepare_call
-- The call `take_prepared_call`'s BLMOVE just moved to a caller's fresh list goes on to its taken
-- list and, if it names a turn, is prepared and started now, by Redis's clock (the BLMOVE sent
-- before it may have waited) (core/store/waits.py `take_prepared_call`).
-- KEYS: the caller's fresh call, its taken list, the deadlines.
-- args: share, share_around, slack, versions_after (`prepare_call`'s), waiting_around and
-- log_around (what comes before and after a match's id in its waiting and log keys).
-- false if there was no call; {the item} if it is not a turn's call or its preparation failed
-- (nothing written); else {the item, now, `prepare_call`'s answer}.
local fresh, taken, deadlines = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])

local item = redis.call('RPOPLPUSH', fresh, taken)
if not item then return false end
local decoded, call = pcall(cjson.decode, item)
if not decoded or type(call) ~= 'table' or call.notice or type(call.match) ~= 'string'
   or type(call.turn) ~= 'number' or call.turn ~= math.floor(call.turn) then
  return {item}
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local ok, prepared = pcall(prepare_call, {
  waiting_key = args.waiting_around[1] .. call.match .. args.waiting_around[2],
  log_key = args.log_around[1] .. call.match .. args.log_around[2],
  deadlines_key = deadlines, taken_key = taken, turn = call.turn, now = now,
  member = call.match .. ':' .. string.format('%d', call.turn), item = item, start = true,
  share = args.share, share_around = args.share_around, slack = args.slack,
  versions_after = args.versions_after})
if not ok then return {item} end
return {item, now, prepared}
