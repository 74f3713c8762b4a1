-- The heartbeat's claim to ping a bot (core/store/bots.py `claim_ping`): taken (1) only if
-- nothing was learnt of it (seen, failed, pinged) since `quiet`, so of several dispatchers
-- exactly one pings it; else 0.
-- KEYS[1] the bot's hash; args: now, quiet (timestamps as stored: JSON text of `keys.iso_ms`,
-- which sorts as its instant).
local bot = KEYS[1]
local args = cjson.decode(ARGV[1])
for _, t in ipairs(redis.call('HMGET', bot, 'last_seen', 'last_failed', 'last_pinged')) do
  if t and t > args.quiet then return 0 end
end
redis.call('HSET', bot, 'last_pinged', args.now)
return 1
