-- queue_get.lua - config and stats of a queue (lib.lua prepended).
-- ARGV: A_QUEUE_GET (scripts.def): the known config version.
-- Reply: R_QUEUE_GET (scripts.def): CODE 0 ok, -1 no queue; the config
-- part; the stats (lib.lua's stats()); AUTO_RATE: the rate autotune.lua
-- keeps, a string ('' = none); LOG_COMMITTED: 1 while an opening's commit
-- awaits its draw (lib_log.lua), else 0; LINES: per line on a queue with
-- priority groups (lib_group.lua G.stats_lines), {} without.
local R = R_QUEUE_GET
local out = R._NEW
local cfg = redis.call('HMGET', K_CONFIG, 'version', 'json', 'autotune', 'grp')
if not cfg[1] then
  out[R.CODE], out[R.STOCK_LEFT], out[R.SOLD_OUT_AT] = -1, -1, -1
  return out
end
group_lib(cfg[4])
out[R.VERSION], out[R.JSON] = version_json(cfg[1], ARGV[A_QUEUE_GET.VERSION], cfg[2])
expire_tokens(now_us())
local removed_admitted
out[R.WAITING], out[R.ACTIVE], out[R.ADMITTED_TOTAL], out[R.CONSUMED_TOTAL],
  out[R.EXPIRED_TOTAL], out[R.LEFT_TOTAL], out[R.REJECTED_FULL_TOTAL], out[R.SESSIONS],
  out[R.RELEASED_TOTAL], out[R.SESSIONS_EXPIRED_TOTAL], out[R.ABANDONED_TOTAL],
  out[R.PREQUEUE], out[R.AWAY], out[R.HELD], out[R.RETURNED_TOTAL], out[R.UNSEEN_EXPIRED_TOTAL],
  out[R.STOCK_LEFT], out[R.SOLD_OUT_AT], out[R.BYPASS_TOTAL], out[R.SUBSCRIBED],
  removed_admitted = stats()
if log_committed() then
  out[R.LOG_COMMITTED] = 1
end
if GRP.on then -- (lib_group.lua: per line)
  out[R.LINES] = GRP.stats_lines(out[R.WAITING], out[R.ADMITTED_TOTAL] - removed_admitted)
elseif removed_admitted > 0 then -- (every group removed: the standard line's count)
  out[R.LINES] = {out[R.WAITING], math.max(0, out[R.ADMITTED_TOTAL] - removed_admitted)}
end
if (cfg[3] or '') ~= '' then
  out[R.AUTO_RATE] = redis.call('HGET', K_STATE, 'autoRate') or ''
end
return out
