-- A bot's next version (core/store/versions.py `new_version`): the latest is written down as it
-- is reached now, then superseded. Its fields are stored as JSON texts, so the record of the
-- old version is made of them as they are.
-- KEYS[1] the bot's hash, KEYS[2] its versions; args: now (JSON text), and url, entrypoint,
-- code (JSON texts, each absent when unchanged). The new version's number.
local bot, versions = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
local current = tonumber(redis.call('HGET', bot, 'version') or '1')
local created = redis.call('HGET', bot, 'version_created') or redis.call('HGET', bot, 'created')
local old = '{"version":' .. current .. ',"created":' .. (created or 'null')
for _, field in ipairs({'url', 'entrypoint', 'code'}) do
  local value = redis.call('HGET', bot, field)
  if value then old = old .. ',"' .. field .. '":' .. value end
end
redis.call('HSET', versions, current, old .. '}')
redis.call('HSET', bot, 'version', current + 1, 'version_created', args.now)
for _, field in ipairs({'url', 'entrypoint', 'code'}) do
  if args[field] then redis.call('HSET', bot, field, args[field]) end
end
return current + 1
