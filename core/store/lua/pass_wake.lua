-- A match woken for a free slot found another of its bots full and waits for that one now: the
-- wake-up goes on to the oldest match waiting for each of its other bots that has a slot free
-- (core/store/slots.py `pass_wake`), so a slot freed is never left idle behind a match that
-- cannot use it. Each such match is taken off its queue.
-- KEYS[1..n] each of those bots' playing sets, KEYS[n+1..2n] their waiting queues, KEYS[2n+1]
-- the bots with waiting matches; args: match (the one waiting now), bots ({id, cap}, n of them).
-- The ids taken off.
local args = cjson.decode(ARGV[1])
local n = #args.bots
local woken = {}
for i, bot in ipairs(args.bots) do
  local playing, waiting = KEYS[i], KEYS[n + i]
  if redis.call('SCARD', playing) < bot.cap then
    for _, id in ipairs(redis.call('ZRANGE', waiting, 0, 1)) do
      if id ~= args.match then
        redis.call('ZREM', waiting, id)
        table.insert(woken, id)
        break
      end
    end
    if redis.call('ZCARD', waiting) == 0 then redis.call('SREM', KEYS[2 * n + 1], bot.id) end
  end
end
return woken
