--! uses release_and_wake
-- A match's slots given back and matches waiting for its bots taken off their queues, in one step
-- (core/store/slots.py `release_slots`, `waiting_for`).
-- KEYS and args: `release_and_wake`'s (lib/release_and_wake.lua). The ids taken off.
return release_and_wake(KEYS, cjson.decode(ARGV[1]))
