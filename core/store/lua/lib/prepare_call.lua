-- prepare_call(call): all a taken webhook call needs (core/store/waits.py `prepare_call`,
-- `take_prepared_call`) and, with call.start, its start (`start_call`). call: waiting_key,
-- log_key, deadlines_key, taken_key, turn, now (epoch ms), member, item, start, share (the
-- account's most calls in flight), share_around (what comes before and after the account in its
-- share's key), slack (`CALL_SLACK_MS`), versions_after (what follows `bot:{id}` in its versions'
-- key). The bot's key is read where its record names it (core/store/bots.py's `bot:{id}`).
-- {"gone"} (the call leaves the taken list) if its turn is no longer a pending webhook call;
-- else {how its start went ("sent" or "over", or "read" if not asked), the waiting record, the
-- bot's url, owner and version (JSON, or false), the pinned version's entry in the bot's
-- versions (or false: the latest), the account}. Nothing is written before what can fail.
local function prepare_call(call)
  local raw = redis.call('HGET', call.waiting_key, 'record')
  local record = raw and cjson.decode(raw)
  if not record or record.turn ~= call.turn or record.kind ~= 'webhook'
     or redis.call('LLEN', call.log_key) > call.turn then
    redis.call('LREM', call.taken_key, 1, call.item)
    return {'gone'}
  end
  local bot_key = 'bot:' .. record.bot
  local fields = redis.call('HMGET', bot_key, 'url', 'owner', 'version')
  local old = false
  if type(record.version) == 'number' and record.version ~= tonumber(fields[3] or '1') then
    old = redis.call('HGET', bot_key .. call.versions_after, record.version)
  end
  local account = record.account
  if type(account) ~= 'string' or account == '' then
    account = fields[2] and cjson.decode(fields[2])
    if type(account) ~= 'string' or account == '' then account = record.bot end
  end
  local started = 'read'
  if call.start then
    started = start_call({
      waiting_key = call.waiting_key, deadlines_key = call.deadlines_key, taken_key = call.taken_key,
      share_key = call.share_around[1] .. account .. call.share_around[2], now = call.now,
      lease = call.now + (record.deadline_at - record.sent_at) + call.slack,  -- its deadline_ms
      member = call.member, item = call.item, share = call.share})
  end
  return {started, raw, fields[1], fields[2], fields[3], old, account}
end
