-- A ladder pairing leaves play, once, and its finished matches are counted for their
-- seats' entrants (core/store/ladder.py `settle_pairing`).
-- KEYS[1] the game's pairings in play, KEYS[2] its played counts; args: pairing, entrants
-- (one per seat of each finished match). 1 if this call took it out of play, else 0.
local pairings, played = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
if redis.call('ZREM', pairings, args.pairing) == 0 then return 0 end
for _, entrant in ipairs(args.entrants) do redis.call('HINCRBY', played, entrant, 1) end
return 1
