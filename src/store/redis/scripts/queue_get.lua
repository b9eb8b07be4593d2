-- queue_get.lua - config and stats of a queue (lib.lua prepended).
-- ARGV[1] known config version.
-- Reply, always 20 elements:
--   {code, version, json, waiting, active, admittedTotal, consumedTotal,
--    expiredTotal, leftTotal, rejectedFullTotal, sessions, releasedTotal,
--    sessionsExpiredTotal, abandonedTotal, prequeue, away, held,
--    returnedTotal, stockLeft, soldOutAt}; code 0 ok, -1 no queue (lib.lua's
--    stats()).
local cfg = redis.call('HMGET', K_CONFIG, 'version', 'json')
if not cfg[1] then
  return {-1, 0, '', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1}
end
local version, json = version_json(cfg[1], ARGV[1], cfg[2])
expire_tokens(now_us())
local w, a, at, ct, et, lt, rt, sn, rl, se, ab, pq, aw, hd, rtt, sl, so = stats()
return {0, version, json, w, a, at, ct, et, lt, rt, sn, rl, se, ab, pq, aw, hd, rtt, sl, so}
