-- log_head.lua - what the public log of a queue holds (store_redis_log.c).
-- KEYS[1] wr:{q}:config, KEYS[2] wr:{q}:log.
-- Reply: {config exists (0/1), its log flag ('1' = publicLog on, '' none),
-- n, hs, cp, cps, cpr, stop, committed (1: an opening's commit awaits its
-- draw, lib_log.lua)} ('' for a field that is absent).
local m = redis.call('HMGET', KEYS[2], 'n', 'hs', 'cp', 'cps', 'cpr', 'stop')
return {redis.call('EXISTS', KEYS[1]), redis.call('HGET', KEYS[1], 'log') or '', m[1] or '',
  m[2] or '', m[3] or '', m[4] or '', m[5] or '', m[6] or '', redis.call('HEXISTS', KEYS[2], 'dseed')}
