-- config_put.lua - creates or replaces a queue's config (lib.lua prepended;
-- touches KEYS[1] and, when tickMs changes, KEYS[5]).
-- ARGV[1]: the config JSON; then the config hash's fields as name, value
-- pairs (ARGV[2], ARGV[3], ...): one per row of src/core/qconfig.c's table
-- with a store name (enabled, paused, rate, tickMs, maxActive, maxQueueSize,
-- ttlSec, sessionSec, idleSec, opensAt (epoch ms, '' = none), shuffle, ...),
-- written as they come, so C and Lua share no list of positions.
-- version: Redis TIME in us when the queue is created (so a queue deleted
-- and created again never reuses a version a cache may hold), then +1 on
-- every put. Reply: the new version (integer).
-- The end of a sale: a pair named stockLeft (sent when the config sets what
-- is left: a PUT, or a PATCH naming stock; '' = no stock) goes to state,
-- not to the config hash, and the sold-out moment follows (lib.lua, "Stock").
-- A change of tickMs resets the admission tick and carry (KEYS[5]): the last
-- tick is counted in the old tick length, and a longer new tick would
-- otherwise compare below it and stop admission.
local new_tick, stock
local pairs_ = {}
for i = 2, #ARGV - 1, 2 do
  if ARGV[i] == 'tickMs' then
    new_tick = ARGV[i + 1]
  end
  if ARGV[i] == 'stockLeft' then
    stock = ARGV[i + 1]
  else
    pairs_[#pairs_ + 1] = ARGV[i]
    pairs_[#pairs_ + 1] = ARGV[i + 1]
  end
end
local old_tick = redis.call('HGET', K_CONFIG, 'tickMs')
if old_tick and old_tick ~= new_tick then
  redis.call('HDEL', K_STATE, 'lastTick', 'carryMicro')
end
local version
if redis.call('HEXISTS', K_CONFIG, 'version') == 0 then
  version = now_us()
  redis.call('HSET', K_CONFIG, 'version', fmt(version))
else
  version = redis.call('HINCRBY', K_CONFIG, 'version', 1)
end
redis.call('HSET', K_CONFIG, 'json', ARGV[1], unpack(pairs_))
if stock == '' then
  redis.call('HDEL', K_STATE, 'stockLeft')
elseif stock then
  redis.call('HSET', K_STATE, 'stockLeft', stock)
end
if stock then
  stock_note(now_us())
end
return version
