-- leave.lua - leave the line or revoke the live token (lib.lua prepended).
-- ARGV[1] user. Reply: 0 left, -1 no queue, -3 not in queue.
local user = ARGV[1]
if redis.call('EXISTS', K_CONFIG) == 0 then
  return -1
end
if redis.call('ZREM', K_WAITING, user) == 1 then
  redis.call('HINCRBY', K_STATE, 'leftTotal', 1)
  return 0
end
expire_tokens(now_us())
if redis.call('HDEL', K_TOKENS, user) == 1 then
  redis.call('ZREM', K_ACTIVE, user)
  redis.call('HINCRBY', K_STATE, 'leftTotal', 1)
  return 0
end
return -3
