-- release_and_wake(keys, args): a match's slots given back and matches waiting for its bots taken
-- off their queues (core/store/slots.py `release_step`).
-- keys[1..n] each bot's playing set, keys[n+1..2n] its waiting queue, keys[2n+1] the bots with
-- waiting matches; args: match (the id giving its slots back, absent for none), bots (their ids,
-- n of them), each (how many to take off each bot's queue, its oldest first: absent for all).
-- The ids taken off.
local function release_and_wake(keys, args)
  local n = #args.bots
  local waiting_bots = keys[2 * n + 1]
  local woken = {}
  for i, bot in ipairs(args.bots) do
    local playing, waiting = keys[i], keys[n + i]
    if args.match then
      redis.call('SREM', playing, args.match)
      redis.call('SREM', playing .. ':guests', args.match)
    end
    local taken = redis.call('ZRANGE', waiting, 0, args.each and args.each - 1 or -1)
    for _, id in ipairs(taken) do table.insert(woken, id) end
    if #taken > 0 then redis.call('ZREM', waiting, unpack(taken)) end
    if redis.call('ZCARD', waiting) == 0 then redis.call('SREM', waiting_bots, bot) end
  end
  return woken
end
