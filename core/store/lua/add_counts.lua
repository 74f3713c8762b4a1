-- Amounts added to fields of hashes, fields set, and entries pushed onto capped lists, all in one
-- step (core/store/counts.py `Counts`).
-- KEYS: the hashes and lists; args: ops: list of {how ("i": HINCRBY, "f": HINCRBYFLOAT, "s":
-- HSET), the hash's index in KEYS, field, amount or value as text}, run in that order; pushes:
-- list of {the list's index in KEYS, its entries (oldest first), how many it keeps}: LPUSH,
-- then LTRIM. How many fields were changed and entries pushed.
local args = cjson.decode(ARGV[1])
local commands = {i = 'HINCRBY', f = 'HINCRBYFLOAT', s = 'HSET'}
for _, op in ipairs(args.ops) do
  redis.call(commands[op[1]], KEYS[op[2]], op[3], op[4])
end
local pushed = 0
for _, push in ipairs(args.pushes) do
  redis.call('LPUSH', KEYS[push[1]], unpack(push[2]))
  redis.call('LTRIM', KEYS[push[1]], 0, push[3] - 1)
  pushed = pushed + #push[2]
end
return #args.ops + pushed
