-- Which calls' turns are no longer pending: settled (the log is longer) or the match over (no
-- waiting record) (core/store/waits.py `calls_over`).
-- KEYS: each call's log then its waiting hash, in turn. args: turns (each call's, in order).
-- The (1-based) indices of the calls over.
local args = cjson.decode(ARGV[1])

local over = {}
for i, turn in ipairs(args.turns) do
  if redis.call('LLEN', KEYS[2 * i - 1]) > turn or redis.call('HEXISTS', KEYS[2 * i], 'record') == 0 then
    over[#over + 1] = i
  end
end
return over
