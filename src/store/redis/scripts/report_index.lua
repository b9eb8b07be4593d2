-- report_index.lua - the INDEX of the report operation (store.h report):
-- the registry of queues with a report, one hash field per queue,
-- "FIRST_MS,DELETED_MS" (DELETED_MS -1: the queue lives).
--   KEYS[1]  the registry (wr:reports; wr:{.global}:reports on a cluster)
--   ARGV[1]  the queue whose entry to update, or '' (none)
--   ARGV[2]  its first minute, kept when the entry exists
--   ARGV[3]  its deleted time, or -1
-- Reply: the registry, HGETALL's flat array.
if ARGV[1] ~= '' then
  local cur = redis.call('HGET', KEYS[1], ARGV[1])
  local first = ARGV[2]
  if cur then
    first = string.match(cur, '^(%-?%d+),') or first
  end
  redis.call('HSET', KEYS[1], ARGV[1], first .. ',' .. ARGV[3])
end
return redis.call('HGETALL', KEYS[1])
