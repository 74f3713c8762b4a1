-- A lease given back, only by its holder (core/store/jobs.py `release_lease`).
-- KEYS[1] the lease; args: token. 1 if it was this token's and is gone, else 0.
local lease = KEYS[1]
local args = cjson.decode(ARGV[1])
if redis.call('GET', lease) == args.token then
  return redis.call('DEL', lease)
end
return 0
