-- secret.lua - the shared token secret, first writer wins.
-- KEYS[1] wr:secret, ARGV[1] proposed secret (binary). Reply: the stored secret.
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
