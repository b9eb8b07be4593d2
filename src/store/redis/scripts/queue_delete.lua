-- queue_delete.lua - removes a queue and all its state (lib.lua prepended).
-- Reply: 0 deleted, -1 no queue.
if redis.call('EXISTS', K_CONFIG) == 0 then
  return -1
end
-- the public log (lib_log.lua): everyone still in its line leaves it,
-- removed, in the order of the line, the pre-queue, held and back; the log
-- itself stays (readable after the delete; a queue created again goes on)
group_lib(redis.call('HGET', K_CONFIG, 'grp'))
if log_on() then
  local now = now_us()
  local lines = {K_WAITING, K_PRE, K_HELD, K_BACK} -- (then the groups' lines, in order)
  for i = 1, GRP.on and GRP.n or 0 do
    lines[#lines + 1] = GRP.key(GRP.slot[i])
  end
  for _, k in ipairs(lines) do
    for _, user in ipairs(redis.call('ZRANGE', k, 0, -1)) do
      log_member(user, 'leave', ',"why":"removed"', now)
    end
  end
end
redis.call('DEL', K_LOGM)
log_uncommit() -- (an opening's commit not drawn: a queue created again commits anew)
redis.call('DEL', K_CONFIG, K_WAITING, K_ACTIVE, K_TOKENS, K_STATE, K_SESSIONS, K_SESSJTI)
redis.call('DEL', K_SEEN, K_PRE, K_HELD, K_BACK, K_AWAY, K_PUSH, K_PUSHDUE)
redis.call('DEL', unpack(KEYS, 19, 29)) -- priority groups (lib_group.lua): lines, gm, codes, gstat
return 0
