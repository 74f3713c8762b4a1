-- take_slots(keys, slots): one slot of each slotted bot for a match, all or none
-- (core/store/slots.py). keys: each bot's playing set, then each bot's waiting set, then the set
-- of bots with matches waiting (`slots:waiting`). slots: match (its id), lease_prefix and
-- waiting_around (a match's lease key is lease_prefix .. id, its waiting hash
-- waiting_around[1] .. id .. waiting_around[2]), now (seconds), bots ({id, cap, share}: cap its
-- max_concurrent; share, for a bot the match is a guest of, its guest share: its guest matches
-- are in the playing set's ':guests' set).
-- A slot is free again when its match has neither a lease (a runner on it) nor a waiting record
-- (between runs, a remote bot's turn pending). 0 when the slots are taken; else the 1-based
-- index of the first full bot, the match having joined its queue in the same step (so a release
-- can never slip between the check and the wait and leave it waiting for nothing).
local function take_slots(keys, slots)
  local n, match = #slots.bots, slots.match
  for i, bot in ipairs(slots.bots) do
    local playing = keys[i]
    if redis.call('SISMEMBER', playing, match) == 0 then
      for _, other in ipairs(redis.call('SMEMBERS', playing)) do
        if redis.call('EXISTS', slots.lease_prefix .. other) == 0
            and redis.call('EXISTS', slots.waiting_around[1] .. other .. slots.waiting_around[2]) == 0 then
          redis.call('SREM', playing, other)
        end
      end
      local guests = playing .. ':guests'
      for _, other in ipairs(redis.call('SMEMBERS', guests)) do
        if redis.call('SISMEMBER', playing, other) == 0 then redis.call('SREM', guests, other) end
      end
      if redis.call('SCARD', playing) >= bot.cap or (bot.share and redis.call('SCARD', guests) >= bot.share) then
        redis.call('ZADD', keys[n + i], 'NX', slots.now, match)
        redis.call('SADD', keys[2 * n + 1], bot.id)
        return i
      end
    end
  end
  for i, bot in ipairs(slots.bots) do
    redis.call('SADD', keys[i], match)
    if bot.share then redis.call('SADD', keys[i] .. ':guests', match) end
    redis.call('ZREM', keys[n + i], match)
  end
  return 0
end
