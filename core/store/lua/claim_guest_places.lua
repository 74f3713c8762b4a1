-- A place for a new guest match with each of its guest bots, all or none
-- (core/store/guests.py `claim_guest_places`).
-- KEYS: each bot's guest set for the account; args: match (the new match id), most (the most
-- unfinished matches at once). A member whose match is over or gone is taken out first.
-- 0 when the match took a place with every bot, else the 1-based index of the first bot at
-- its most (nothing taken then).
local args = cjson.decode(ARGV[1])
for i, guests in ipairs(KEYS) do
  for _, m in ipairs(redis.call('SMEMBERS', guests)) do
    local status = redis.call('HGET', 'match:' .. m, 'status')
    if not status or status == '"finished"' or status == '"aborted"' then redis.call('SREM', guests, m) end
  end
  if redis.call('SCARD', guests) >= args.most then return i end
end
for _, guests in ipairs(KEYS) do redis.call('SADD', guests, args.match) end
return 0
