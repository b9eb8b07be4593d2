-- leave.lua - leave the line or revoke the live token, and end the open
-- session (lib.lua prepended).
-- ARGV[1] user (in line, in the pre-queue, held or holding a token). Reply: 0 left (anything removed), -1 no queue, -3 not in
-- queue. Line or token count in leftTotal, the session in releasedTotal.
-- Sweeps only when the user is not in line (as before sessions), before
-- it looks at the pre-queue, held and tokens; a session of a user in line
-- that has already ended is left to the sweep. A group member (lib_group.lua)
-- leaves their group's line the same way, and gm with whatever they leave.
local user = ARGV[1]
local cfg = redis.call('HMGET', K_CONFIG, 'version', 'grp')
if not cfg[1] then
  return -1
end
group_lib(cfg[2])
local now = now_us()
local left = false
local LEFT = ',"why":"left"' -- (the public log's leave leaf)
redis.call('HDEL', K_PUSH, user) -- Web Push: leaving deletes the subscription
local gslot = GRP.on and GRP.of(user)
if redis.call('ZREM', K_WAITING, user) == 1 or
    (gslot and redis.call('ZREM', GRP.key(gslot), user) == 1) then
  log_member(user, 'leave', LEFT, now)
  redis.call('HDEL', K_SEEN, user)
  redis.call('SREM', K_AWAY, user)
  redis.call('HINCRBY', K_STATE, 'leftTotal', 1)
  left = true
else
  -- the sweep first: an unseen pass expiring now holds its holder (lib.lua
  -- unseen_expire), whose leave this is
  expire_tokens(now)
  if redis.call('ZREM', K_PRE, user) == 1 then
    -- the pre-queue (sale opening); the last one out ends a running opening
    log_member(user, 'leave', LEFT, now)
    redis.call('HDEL', K_SEEN, user)
    redis.call('HINCRBY', K_STATE, 'leftTotal', 1)
    left = true
    if redis.call('HGET', K_STATE, 'opening') == '1' then
      open_settle()
    end
  elseif redis.call('ZREM', K_HELD, user) + redis.call('ZREM', K_BACK, user) > 0 then
    -- held (away, not gone)
    log_member(user, 'leave', LEFT, now)
    redis.call('HDEL', K_SEEN, user)
    redis.call('HINCRBY', K_STATE, 'leftTotal', 1)
    left = true
  elseif redis.call('HDEL', K_TOKENS, user) == 1 then
    log_forget({user}) -- (a pass given back: nothing more to the log)
    redis.call('ZREM', K_ACTIVE, user)
    redis.call('HINCRBY', K_STATE, 'leftTotal', 1)
    stock_return(1) -- given back: its unit returns
    left = true
  end
end
if left and gslot then
  GRP.forget({user})
end
local send = session_of(user)
if send and send > now then
  session_drop(user)
  redis.call('HINCRBY', K_STATE, 'releasedTotal', 1)
  left = true
end
if left then
  return 0
end
return -3
