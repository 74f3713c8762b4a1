-- live(out, now): whether `pending`'s reply `out` holds a decision that may be live at `now`:
-- not answered (its match's log no longer than its turn) and its deadline (the record's
-- deadline_at) after now. A record that cannot be read counts as live. The test of
-- core/store/decisions.py `_live_texts`, given the same now.
local function live(out, now)
  for i = 1, #out, 3 do
    local turn = tonumber(string.match(out[i], ':(%d+)$'))
    local read, record = pcall(cjson.decode, out[i + 1])
    local deadline = read and type(record) == 'table' and tonumber(record.deadline_at)
    if not turn or not deadline or (deadline > now and out[i + 2] <= turn) then return true end
  end
  return false
end
