-- log_lease.lua - the public log's signer lease (store_redis_log.c): one
-- instance at a time hashes and signs. KEYS[1] wr:loglease; ARGV[1] this
-- instance's id, ARGV[2] the lease in ms. Reply: 1 held by us (taken or
-- renewed), 0 held by another.
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
