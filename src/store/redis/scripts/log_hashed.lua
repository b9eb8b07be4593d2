-- log_hashed.lua - stores the subtree hashes of leaves [FROM, TO) of a
-- queue's public log and moves hs (the leaves hashed) to TO, never back
-- (store_redis_log.c: two instances hashing the same leaves write the
-- same bytes). KEYS[1] wr:{q}:logh, KEYS[2] wr:{q}:log; ARGV[1] FROM,
-- ARGV[2] TO, then "<level>:<index>", hash pairs. Reply: 1.
local i = 3
while i < #ARGV do
  local j = math.min(i + 999, #ARGV) -- 500 pairs a call
  redis.call('HSET', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
if tonumber(redis.call('HGET', KEYS[2], 'hs') or '0') < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[2], 'hs', ARGV[2])
end
return 1
