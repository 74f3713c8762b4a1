-- Amounts added to fields of hashes, and fields set, all in one step (core/store/counts.py
-- `Counts`).
-- KEYS: the hashes; args: ops: list of {how ("i": HINCRBY, "f": HINCRBYFLOAT, "s": HSET), the
-- hash's index in KEYS, field, amount or value as text}, run in that order. How many.
local args = cjson.decode(ARGV[1])
local commands = {i = 'HINCRBY', f = 'HINCRBYFLOAT', s = 'HSET'}
for _, op in ipairs(args.ops) do
  redis.call(commands[op[1]], KEYS[op[2]], op[3], op[4])
end
return #args.ops
