-- credited(bot, credential): whether a bot's own request may do its work (core/store/bots.py
-- `run_credited`): the bot (`bot`, its hash) still holds the nonce its secret was checked
-- against (credential.nonce, as stored) and is not retired. The bot is noted seen then
-- (credential.now) when it was last seen at credential.seen_before or earlier.
local function credited(bot, credential)
  local held = redis.call('HMGET', bot, 'nonce', 'retired', 'last_seen')
  if held[1] ~= credential.nonce or held[2] == 'true' then return false end
  if not held[3] or held[3] <= credential.seen_before then
    redis.call('HSET', bot, 'last_seen', credential.now)
  end
  return true
end
