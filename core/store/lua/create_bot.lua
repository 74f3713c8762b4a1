-- A new bot and its name (core/store/bots.py `create_bot`). The name is taken unless its holder
-- is retired or gone (deleted by hand).
-- KEYS[1] the game's names, KEYS[2] the bot's hash, KEYS[3] `bots`, KEYS[4] the game's bots;
-- args: bot (its id), seq (its registration number), fields (the bot's hash, field -> value);
-- ARGV[2] the folded name, outside the JSON table because it is bytes (`fold_name`).
-- The holder of the name when taken, else false.
local names, bot, bots, game_bots = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local args = cjson.decode(ARGV[1])
local name = ARGV[2]
local holder = redis.call('HGET', names, name)
if holder and holder ~= args.bot then
  local retired = redis.call('HGET', 'bot:' .. holder, 'retired')
  if retired and retired ~= 'true' then return holder end
end
redis.call('HSET', names, name, args.bot)
for field, value in pairs(args.fields) do redis.call('HSET', bot, field, value) end
redis.call('ZADD', bots, args.seq, args.bot)
redis.call('ZADD', game_bots, args.seq, args.bot)
return false
