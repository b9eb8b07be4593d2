-- log_publish.lua - keeps a signed checkpoint of a queue's public log as
-- the latest, when its size is at least the kept one's and the log is not
-- stopped (store_redis_log.c checked its root against the stored hashes
-- first). KEYS[1] wr:{q}:log; ARGV[1] size, ARGV[2] the signed note,
-- ARGV[3] its root (32 bytes). Reply: 1 kept, 0 refused.
local m = redis.call('HMGET', KEYS[1], 'cps', 'stop')
if m[2] == '1' or tonumber(ARGV[1]) < tonumber(m[1] or '0') then
  return 0
end
redis.call('HSET', KEYS[1], 'cp', ARGV[2], 'cps', ARGV[1], 'cpr', ARGV[3])
return 1
