-- pending(decisions, around, skip): a bot's pending decisions (`decisions`, its hash) but those
-- whose field is in the list `skip` (the bot holds them), each field and its record followed by
-- the length of its match's log: the match named by the field "{match}:{turn}", its log's key
-- around[1] .. match .. around[2] (core/store/decisions.py `LOG_KEY_AROUND`).
-- A flat list: field, record, length, field, ...
local function pending(decisions, around, skip)
  local skipped = {}
  for _, field in ipairs(skip) do skipped[field] = true end
  local raw = redis.call('HGETALL', decisions)
  local out = {}
  for i = 1, #raw, 2 do
    if not skipped[raw[i]] then
      local match = string.match(raw[i], '^(.*):%d+$')
      out[#out + 1] = raw[i]
      out[#out + 1] = raw[i + 1]
      out[#out + 1] = match and redis.call('LLEN', around[1] .. match .. around[2]) or 0
    end
  end
  return out
end
