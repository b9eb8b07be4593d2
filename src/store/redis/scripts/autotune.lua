-- autotune.lua - the autotune state of a queue (store.h autotune; lib.lua
-- prepended; touches KEYS[1] (read) and KEYS[5]).
-- ARGV: [1] report ('1'/'0'), [2] source (0/1), [3] latencyMs, [4] errorRate,
--       [5] set ('1'/'0'), [6] expected step us, [7] rate, [8] cut latency ms.
-- State fields of wr:{q}:state: autoRate, autoStep (us), autoCut, and rep0,
-- rep1 = "latencyMs errorRate at_us" (the reports, received at Redis TIME).
-- Reply (strings): {code, rate, step, cut, lat0, err0, at0, lat1, err1, at1,
-- now, applied}; code '0' ok, '-1' no queue. Floats as '%.17g', so C
-- reads back the very double it wrote.
if redis.call('EXISTS', K_CONFIG) == 0 then
  return {'-1', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0'}
end
local now = now_us()
if ARGV[1] == '1' then
  redis.call('HSET', K_STATE, 'rep' .. ARGV[2], ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. fmt(now))
end
local st = redis.call('HMGET', K_STATE, 'autoRate', 'autoStep', 'autoCut', 'rep0', 'rep1')
local applied = '0'
if ARGV[5] == '1' and (st[2] or '0') == ARGV[6] then
  st[1], st[2], st[3] = ARGV[7], fmt(now), ARGV[8]
  redis.call('HSET', K_STATE, 'autoRate', st[1], 'autoStep', st[2], 'autoCut', st[3])
  applied = '1'
end
local out = {'0', st[1] or '0', st[2] or '0', st[3] or '0'}
for i = 4, 5 do
  local l, e, at = string.match(st[i] or '', '^(%S+) (%S+) (%S+)$')
  out[#out + 1] = l or '0'
  out[#out + 1] = e or '0'
  out[#out + 1] = at or '0'
end
out[#out + 1] = fmt(now)
out[#out + 1] = applied
return out
