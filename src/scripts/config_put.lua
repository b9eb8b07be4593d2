-- config_put.lua - creates or replaces a queue's config (lib.lua prepended;
-- only KEYS[1] is touched, all five are passed for uniformity).
-- ARGV: json, enabled, paused, rate, tickMs, maxActive, maxQueueSize, ttlSec.
-- version: Redis TIME in us when the queue is created (so a queue deleted
-- and created again never reuses a version a cache may hold), then +1 on
-- every put. Reply: the new version (integer).
local version
if redis.call('HEXISTS', K_CONFIG, 'version') == 0 then
  version = now_us()
  redis.call('HSET', K_CONFIG, 'version', fmt(version))
else
  version = redis.call('HINCRBY', K_CONFIG, 'version', 1)
end
redis.call('HSET', K_CONFIG, 'json', ARGV[1], 'enabled', ARGV[2], 'paused', ARGV[3], 'rate',
  ARGV[4], 'tickMs', ARGV[5], 'maxActive', ARGV[6], 'maxQueueSize', ARGV[7], 'ttlSec', ARGV[8])
return version
