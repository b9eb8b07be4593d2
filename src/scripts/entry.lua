-- entry.lua - join and status (lib.lua prepended).
-- ARGV[1] user, ARGV[2] known config version ('0' = none),
-- ARGV[3] '1' = join (add when absent), '2' = join by the queue page (a
-- newcomer is pending: admission passes over them until they ask again),
-- '0' = status, '3' = quiet status (records nothing for a waiting user;
-- lib.lua).
-- Else a waiting user idle past idleSec is removed first (abandonedTotal)
-- and answered as one not in line; any other waiting user's last-seen time
-- becomes now and their pending mark is cleared.
-- Reply, always 10 elements:
--   {kind, version, json, position, waiting, jti, iat_us, exp_us,
--    head_due_us, own_due_us}
--   head_due_us, own_due_us: after a join that added the user, us from now
--   until the first of the line and this user may be admitted (the
--   admission delay, queue.h wr_queue_admit_due_us, as admit.lua applies
--   it); -1 otherwise.
--   kind: 1 WAITING, 2 ADMITTED, 3 PASSTHROUGH,
--         -1 no queue, -2 line full (waiting set), -3 not in queue.
local mode = ARGV[3]
local user, known, is_join, is_page = ARGV[1], ARGV[2], mode == '1' or mode == '2', mode == '2'
local cfg = redis.call('HMGET', K_CONFIG, 'version', 'enabled', 'maxQueueSize', 'idleSec')
if not cfg[1] then
  return {-1, 0, '', 0, 0, '', 0, 0, -1, -1}
end
-- The JSON is read only when the caller's cached version is stale.
local version, json = tonumber(cfg[1]), ''
if known ~= cfg[1] then
  json = redis.call('HGET', K_CONFIG, 'json') or ''
end
if cfg[2] == '0' then
  return {3, version, json, 0, 0, '', 0, 0, -1, -1}
end
-- The hot path (a waiting user's poll) needs no token sweep: answer it
-- first. A quiet status needs not even the clock; others read and write
-- the last-seen time.
local rank = redis.call('ZRANK', K_WAITING, user)
if rank and mode == '3' then
  return {1, version, json, rank + 1, redis.call('ZCARD', K_WAITING), '', 0, 0, -1, -1}
end
local now = now_us()
local I = idle_lib()
local idle = I.idle_us(cfg[4])
if rank then
  if I.is_idle(I.seen_of(redis.call('HGET', K_SEEN, user)), now, idle) then
    I.abandon({user}) -- checked on read: asking late does not revive
  else
    I.seen_set(user, now, false)
    return {1, version, json, rank + 1, redis.call('ZCARD', K_WAITING), '', 0, 0, -1, -1}
  end
end
expire_tokens(now)
local jti, iat, exp = parse_token(redis.call('HGET', K_TOKENS, user))
if jti and exp > now then
  return {2, version, json, 0, 0, jti, iat, exp, -1, -1}
end
if not is_join then
  return {-3, version, json, 0, 0, '', 0, 0, -1, -1}
end
local waiting = redis.call('ZCARD', K_WAITING)
local max = tonumber(cfg[3] or '0')
if max > 0 and waiting >= max then
  redis.call('HINCRBY', K_STATE, 'rejectedFullTotal', 1)
  return {-2, version, json, 0, waiting, '', 0, 0, -1, -1}
end
local last = tonumber(redis.call('HGET', K_STATE, 'lastScore') or '0')
local score = now
if score <= last then
  score = last + 1
end
redis.call('ZADD', K_WAITING, 'NX', fmt(score), user)
I.seen_set(user, now, is_page)
redis.call('HSET', K_STATE, 'lastScore', fmt(score))
rank = redis.call('ZRANK', K_WAITING, user)
local head = redis.call('ZRANGE', K_WAITING, 0, 0, 'WITHSCORES')
return {1, version, json, rank + 1, waiting + 1, '', 0, 0, admit_due(tonumber(head[2]), now),
  admit_due(score, now)}
