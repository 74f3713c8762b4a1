-- The ratings a queued match produced saved, the deal kept and its encounter records written, and
-- the match dropped from the head of its game's rating queue, only while it is that head
-- (core/store/ratings.py `apply_rating_event`).
-- KEYS[1] the queue, KEYS[2] the game's ratings, KEYS[3] its ladder, KEYS[4] its rated deals,
-- KEYS[5] its pairs of accounts, KEYS[6] its entrants' results, KEYS[7] the rating lock, then
-- each entrant's history list in the order of args.entrants; args: match, token (the caller's
-- of the rating lock, "" for no check), history (points a history keeps), deal (JSON text,
-- "" when the deal is not rated), pairs and met ({field, record (JSON text)} each), entrants
-- ({entrant, rating (JSON text), ordinal, point (JSON text)} each). 1 if applied, else 0.
local queue, ratings, ladder = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])
if args.token ~= '' and redis.call('GET', KEYS[7]) ~= args.token then return 0 end
if redis.call('LINDEX', queue, 0) ~= args.match then return 0 end
if args.deal ~= '' then redis.call('RPUSH', KEYS[4], args.deal) end
for _, p in ipairs(args.pairs) do redis.call('HSET', KEYS[5], p.field, p.record) end
for _, m in ipairs(args.met) do redis.call('HSET', KEYS[6], m.field, m.record) end
for i, e in ipairs(args.entrants) do
  local history = KEYS[7 + i]
  redis.call('HSET', ratings, e.entrant, e.rating)
  redis.call('ZADD', ladder, e.ordinal, e.entrant)
  redis.call('RPUSH', history, e.point)
  redis.call('LTRIM', history, -args.history, -1)
end
redis.call('LPOP', queue)
return 1
