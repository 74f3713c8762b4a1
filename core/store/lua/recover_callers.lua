-- A dead (or stopping) caller's calls go back in the queue: those it took and did not send, and
-- the one its taker was moving (core/store/waits.py `recover_callers`, `caller_gone`).
-- KEYS: its taken list, the calls, the callers, its fresh list. args: caller.
-- How many calls went back.
local taken, calls, callers, fresh = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local args = cjson.decode(ARGV[1])

local n = 0
for _, list in ipairs({fresh, taken}) do
  while redis.call('RPOPLPUSH', list, calls) do n = n + 1 end
end
redis.call('SREM', callers, args.caller)
return n
