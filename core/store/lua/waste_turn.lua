-- One more wasted turn request of a caller (core/store/quotas.py `waste_turn`); its window
-- starts at its first. KEYS[1] the caller's wasted requests; args: window (ms).
-- {how many the window holds now, ms left until it ends}.
local wasted = KEYS[1]
local args = cjson.decode(ARGV[1])
local n = redis.call('INCR', wasted)
local left = redis.call('PTTL', wasted)
if left < 0 then
  redis.call('PEXPIRE', wasted, args.window)
  left = args.window
end
return {n, left}
