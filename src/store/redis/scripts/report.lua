-- report.lua - the WRITE of the report operation (store.h report;
-- core/report.h), lib.lua prepended for stats(). In one atomic step: sets
-- the sample field (an "s" field only when absent: the first instance's
-- sample of a minute wins; an "e" field, a deleted queue's last sample,
-- always), adds to the count fields, and sets when the day's map may go.
--   KEYS      the queue's keys (lib.lua); nothing here writes them
--   ARGV      A_REPORT (scripts.def): the day's map wr:{q}:report:<day>
--             (the queue's hash tag), when it may go (epoch ms), the
--             sample field or '' (none), the admission rate in use (text,
--             for the sample); then field, n pairs: HINCRBY
-- A sample (wr_report_sample_t as text): the store's time in ms,
-- consumed, expired, left, rejectedFull, abandoned, returned, waiting,
-- away, rate. No sample of a queue that does not exist. Reply: with a
-- sample field, {'exists', '1' or '0'} (whether the queue exists); else 0.
local rk, field = ARGV[A_REPORT.DAY_KEY], ARGV[A_REPORT.SAMPLE]
local exists = field ~= '' and redis.call('EXISTS', K_CONFIG) == 1 -- (asked with a sample only)
if exists and
    (string.sub(field, 1, 1) == 'e' or redis.call('HEXISTS', rk, field) == 0) then
  -- stats()'s values, in its order (lib.lua)
  local waiting, _, _, consumed, expired, left, rejected, _, _, _, abandoned, _, away, _,
    returned = stats()
  local t = redis.call('TIME')
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', rk, field, table.concat({fmt(ms), fmt(consumed), fmt(expired), fmt(left),
    fmt(rejected), fmt(abandoned), fmt(returned), fmt(waiting), fmt(away),
    ARGV[A_REPORT.RATE]}, ','))
end
for i = A_REPORT._N + 1, #ARGV - 1, 2 do
  redis.call('HINCRBY', rk, ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIREAT', rk, ARGV[A_REPORT.EXPIRE_AT_MS]) -- (a no-op when rk does not exist)
if field ~= '' then
  return {'exists', exists and '1' or '0'}
end
return 0
