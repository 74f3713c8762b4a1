-- A comparison's deal counted once (core/store/comparisons.py `count_deal`).
-- KEYS[1] the deals done, KEYS[2] the sums; args: deal, record (its statistic as stored, JSON
-- text), statistic (a number, or null for a void deal: done, not counted).
-- The sums {n, total, squares} after it, or nil if the deal was done already.
local deals, sums = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
if redis.call('HSETNX', deals, args.deal, args.record) == 0 then return nil end
if args.statistic ~= cjson.null then
  local x = args.statistic
  redis.call('HINCRBY', sums, 'n', 1)
  redis.call('HINCRBYFLOAT', sums, 'total', x)
  redis.call('HINCRBYFLOAT', sums, 'squares', x * x)
end
return redis.call('HMGET', sums, 'n', 'total', 'squares')
