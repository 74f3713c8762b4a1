-- Amounts added to fields of hashes, all in one step (core/store/counts.py `Counts`).
-- KEYS: the hashes; args: ints, floats: lists of {the hash's index in KEYS, field, amount as
-- text}, added with HINCRBY and HINCRBYFLOAT in that order. How many were added.
local args = cjson.decode(ARGV[1])
for _, add in ipairs(args.ints) do
  redis.call('HINCRBY', KEYS[add[1]], add[2], add[3])
end
for _, add in ipairs(args.floats) do
  redis.call('HINCRBYFLOAT', KEYS[add[1]], add[2], add[3])
end
return #args.ints + #args.floats
