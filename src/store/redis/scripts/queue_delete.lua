-- queue_delete.lua - removes a queue and all its state (lib.lua prepended).
-- Reply: 0 deleted, -1 no queue.
if redis.call('EXISTS', K_CONFIG) == 0 then
  return -1
end
redis.call('DEL', K_CONFIG, K_WAITING, K_ACTIVE, K_TOKENS, K_STATE, K_SESSIONS, K_SESSJTI)
redis.call('DEL', K_SEEN, K_PRE, K_HELD, K_BACK, K_AWAY)
return 0
