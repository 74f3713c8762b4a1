-- A retired bot's name freed, if the bot still holds it (core/store/bots.py `retire_bot`).
-- KEYS[1] the game's names; args: bot (its id); ARGV[2] the folded name, outside the JSON table
-- because it is bytes (`fold_name`).
local names = KEYS[1]
local args = cjson.decode(ARGV[1])
if redis.call('HGET', names, ARGV[2]) == args.bot then redis.call('HDEL', names, ARGV[2]) end
return 1
