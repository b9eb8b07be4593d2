-- autotune.lua - the autotune state of a queue (store.h autotune; lib.lua
-- prepended; touches KEYS[1] (read) and KEYS[5]).
-- ARGV: A_AUTOTUNE (scripts.def): REPORT ('1'/'0'), SOURCE (0/1),
--       LATENCY_MS, ERROR_RATE, SET ('1'/'0'), STEP_US (the expected step),
--       RATE, CUT_MS (cut latency ms).
-- State fields of wr:{q}:state: autoRate, autoStep (us), autoCut, and rep0,
-- rep1 = "latencyMs errorRate at_us" (the reports, received at Redis TIME).
-- Reply: R_AUTOTUNE (scripts.def), every element a string: CODE '0' ok,
-- '-1' no queue; the kept RATE, STEP, CUT; each source's report (LATn,
-- ERRn, ATn); NOW; APPLIED. Floats as '%.17g', so C reads back the very
-- double it wrote.
local R, A = R_AUTOTUNE, A_AUTOTUNE
local out = R._NEW
out[R.APPLIED] = '0'
if redis.call('EXISTS', K_CONFIG) == 0 then
  out[R.CODE] = '-1'
  return out
end
local now = now_us()
if ARGV[A.REPORT] == '1' then
  redis.call('HSET', K_STATE, 'rep' .. ARGV[A.SOURCE],
    ARGV[A.LATENCY_MS] .. ' ' .. ARGV[A.ERROR_RATE] .. ' ' .. fmt(now))
end
local st = redis.call('HMGET', K_STATE, 'autoRate', 'autoStep', 'autoCut', 'rep0', 'rep1')
if ARGV[A.SET] == '1' and (st[2] or '0') == ARGV[A.STEP_US] then
  st[1], st[2], st[3] = ARGV[A.RATE], fmt(now), ARGV[A.CUT_MS]
  redis.call('HSET', K_STATE, 'autoRate', st[1], 'autoStep', st[2], 'autoCut', st[3])
  out[R.APPLIED] = '1'
end
out[R.RATE], out[R.STEP], out[R.CUT] = st[1] or '0', st[2] or '0', st[3] or '0'
local rep = {{R.LAT0, R.ERR0, R.AT0, st[4]}, {R.LAT1, R.ERR1, R.AT1, st[5]}}
for _, r in ipairs(rep) do
  local l, e, at = string.match(r[4] or '', '^(%S+) (%S+) (%S+)$')
  out[r[1]], out[r[2]], out[r[3]] = l or '0', e or '0', at or '0'
end
out[R.NOW] = fmt(now)
out[R.CODE] = '0'
return out
