-- config_put.lua - creates or replaces a queue's config (lib.lua prepended;
-- touches KEYS[1] and, when tickMs changes, KEYS[5]).
-- ARGV: json, enabled, paused, rate, tickMs, maxActive, maxQueueSize, ttlSec,
-- sessionSec, idleSec, opensAt (epoch ms, '' = none), shuffle ('1'/'0'),
-- holdSec (awayHoldSeconds).
-- version: Redis TIME in us when the queue is created (so a queue deleted
-- and created again never reuses a version a cache may hold), then +1 on
-- every put. Reply: the new version (integer).
-- A change of tickMs resets the admission tick and carry (KEYS[5]): the last
-- tick is counted in the old tick length, and a longer new tick would
-- otherwise compare below it and stop admission.
local old_tick = redis.call('HGET', K_CONFIG, 'tickMs')
if old_tick and old_tick ~= ARGV[5] then
  redis.call('HDEL', K_STATE, 'lastTick', 'carryMicro')
end
local version
if redis.call('HEXISTS', K_CONFIG, 'version') == 0 then
  version = now_us()
  redis.call('HSET', K_CONFIG, 'version', fmt(version))
else
  version = redis.call('HINCRBY', K_CONFIG, 'version', 1)
end
redis.call('HSET', K_CONFIG, 'json', ARGV[1], 'enabled', ARGV[2], 'paused', ARGV[3], 'rate',
  ARGV[4], 'tickMs', ARGV[5], 'maxActive', ARGV[6], 'maxQueueSize', ARGV[7], 'ttlSec', ARGV[8],
  'sessionSec', ARGV[9], 'idleSec', ARGV[10], 'opensAt', ARGV[11], 'shuffle', ARGV[12],
  'holdSec', ARGV[13])
return version
