--! uses start_call prepare_call
-- A taken webhook call prepared, and started if asked (core/store/waits.py `prepare_call`).
-- KEYS: the waiting hash, the log, the deadlines, the caller's taken list.
-- args: `prepare_call`'s call but its keys. `prepare_call`'s answer.
local args = cjson.decode(ARGV[1])
args.waiting_key, args.log_key, args.deadlines_key, args.taken_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
return prepare_call(args)
