-- take(keys, places): a place in each sorted set of `keys`, or in none (core/store/quotas.py
-- `take_places`). places: now (epoch ms: the places that ended by then lapse first), ends_at
-- (when this place must have ended, epoch ms: its score, and its key lives at least until then),
-- token (its member), caps (each key's cap, in the order of `keys`).
-- 0 if taken, else the (1-based) index of the first key holding its cap already.
local function take(keys, places)
  for i, key in ipairs(keys) do
    redis.call('ZREMRANGEBYSCORE', key, '-inf', places.now)
    if redis.call('ZCARD', key) >= places.caps[i] then return i end
  end
  local ttl = places.ends_at - places.now
  for _, key in ipairs(keys) do
    redis.call('ZADD', key, places.ends_at, places.token)
    if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
  end
  return 0
end
