--! uses take
-- Places of one tenant or more under one token, in every key or in none (core/store/quotas.py
-- `take_places`). KEYS: the places' sorted sets; args: places (`take`'s).
-- 0 if taken, else the (1-based) index of the first key holding its cap already.
local args = cjson.decode(ARGV[1])
return take(KEYS, args.places)
