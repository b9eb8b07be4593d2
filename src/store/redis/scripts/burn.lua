-- burn.lua - degraded mode: spends a fail-open pass once across every
-- instance (store.h burn). Standalone (lib.lua is not prepended).
-- KEYS[1] wr:{q}:config  (the queue exists when it does)
-- KEYS[2] wr:{q}:burned  ZSET jti -> the pass's expiry, us
-- ARGV[1] jti, ARGV[2] expiry us, ARGV[3] '1' = check only (verify).
-- Reply: 0 not burned before (now burned, unless check only), -1 no queue,
--        -2 burned already, -3 expired (nothing recorded).
-- Burns whose expiry has passed are dropped first (Redis TIME).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local jti, exp, check = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%d', now))
if redis.call('ZSCORE', KEYS[2], jti) then
  return -2
end
if not exp or exp <= now then
  return -3
end
if not check then
  redis.call('ZADD', KEYS[2], string.format('%d', exp), jti)
  -- the set goes with its last pass: no key outlives what it holds
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[2], math.floor(tonumber(last[2]) / 1000) + 1000)
end
return 0
