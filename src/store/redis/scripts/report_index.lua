-- report_index.lua - the INDEX of the report operation (store.h report):
-- the registry of queues with a report, one hash field per queue,
-- "FIRST_MS,DELETED_MS" (DELETED_MS -1: the queue lives).
--   KEYS[1]  the registry (wr:reports; wr:{.global}:reports on a cluster)
--   ARGV[1]  the queue whose entry to look up or update, or '' (none: list)
--   ARGV[2]  'lookup', or its first minute (kept when the entry exists)
--   ARGV[3]  its deleted time, or -1
-- Reply: the registry (HGETALL's flat array) without a queue; the
-- queue's {name, entry} (or {}) for a lookup; {} after an update (the
-- registry may hold every queue a Redis ever had: an update never
-- answers it whole).
local q = ARGV[1]
if q == '' then
  return redis.call('HGETALL', KEYS[1])
end
local cur = redis.call('HGET', KEYS[1], q)
if ARGV[2] == 'lookup' then
  if cur then
    return {q, cur}
  end
  return {}
end
local first = ARGV[2]
if cur then
  first = string.match(cur, '^(%-?%d+),') or first
end
redis.call('HSET', KEYS[1], q, first .. ',' .. ARGV[3])
return {}
