-- The ratings a queued match produced saved, and the match dropped from the head of its game's
-- rating queue, only while it is that head (core/store/ratings.py `apply_rating_event`).
-- KEYS[1] the queue, KEYS[2] the game's ratings, KEYS[3] its ladder, then each entrant's history
-- list in the order of args.entrants; args: match, history (points a history keeps), entrants
-- ({entrant, rating (JSON text), ordinal, point (JSON text)} each). 1 if applied, else 0.
local queue, ratings, ladder = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])
if redis.call('LINDEX', queue, 0) ~= args.match then return 0 end
for i, e in ipairs(args.entrants) do
  local history = KEYS[3 + i]
  redis.call('HSET', ratings, e.entrant, e.rating)
  redis.call('ZADD', ladder, e.ordinal, e.entrant)
  redis.call('RPUSH', history, e.point)
  redis.call('LTRIM', history, -args.history, -1)
end
redis.call('LPOP', queue)
return 1
