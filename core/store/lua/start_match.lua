--! uses start_match
-- A runner starts the match (core/store/matches.py `start_match`).
-- KEYS: the match hash. args: started_at (now, JSON). {attempts, changed}.
local args = cjson.decode(ARGV[1])
local attempts, changed = start_match(KEYS[1], args.started_at)
return {attempts, changed}
