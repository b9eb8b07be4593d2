-- log_key.lua - the public log's signing key and the master of the
-- queues' log salts (store_redis_log.c), first writer wins, as the token
-- secret (secret.lua). KEYS[1] wr:logkey, KEYS[2] wr:logsalt (with
-- {.global} on a cluster); ARGV[1] the proposed key's seed ('': the salt
-- master alone, the key untouched), ARGV[2] a proposed salt master (32
-- bytes each, from waitroomd's CSPRNG).
-- Reply: {key (false when none is kept), salt master} as kept.
if ARGV[1] ~= '' then
  redis.call('SET', KEYS[1], ARGV[1], 'NX')
end
redis.call('SET', KEYS[2], ARGV[2], 'NX')
return redis.call('MGET', KEYS[1], KEYS[2])
