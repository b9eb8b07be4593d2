-- log_read.lua - leaves and stored hashes of a queue's public log
-- (store_redis_log.c). KEYS[1] wr:{q}:logl, KEYS[2] wr:{q}:logh; ARGV[1]
-- N, then N leaf indices, then "<level>:<index>" fields. Reply: the N
-- leaves, then the hashes, in order (false where absent).
local n = tonumber(ARGV[1])
local out = {}
if n > 0 then
  out = redis.call('HMGET', KEYS[1], unpack(ARGV, 2, n + 1))
end
if #ARGV > n + 1 then
  local h = redis.call('HMGET', KEYS[2], unpack(ARGV, n + 2, #ARGV))
  for i = 1, #h do
    out[n + i] = h[i]
  end
end
return out
