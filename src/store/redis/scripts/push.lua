-- push.lua - sets or deletes a person's Web Push subscription (store.h
-- push_sub; lib.lua and lib_entry.lua prepended), after a status of them.
-- ARGV: A_PUSH (scripts.def): USER; SUB, the subscription as waitroomd
-- packed it (wr_pushsub_pack; stored as it comes, never read here), ''
-- to delete it.
-- The rules are the embedded store's (memq_push.c, push_status): after
-- the token sweep, an admitted person is refused before any status (this
-- answer does not carry their pass, so it must not mark an unseen one
-- seen: its expiry holds them); then a status of the person (lib_entry.lua
-- entry(): their last-seen time recorded as by a poll, a held person
-- returns); a person waiting, in the pre-queue or held may subscribe, and
-- while the sale is closed or sold out a person in line or the pre-queue.
-- A new subscription replaces the old one. The push hash (lib.lua KEYS[17])
-- holds it until leave.lua deletes it, admit.lua claims it (the admission's
-- push) or queue_delete.lua deletes the queue.
-- Reply: 0 done, -1 no queue, -3 not in queue (admitted people too).
local user, sub = ARGV[A_PUSH.USER], ARGV[A_PUSH.SUB]
local c = entry_config(nil)
if not c then
  return -1
end
c.enabled = true -- (the embedded store's status does not look at it either)
entry_clock(c)
entry_sweep(c)
local jti, _, exp = parse_token(redis.call('HGET', K_TOKENS, user))
if jti and exp > c.now then
  return -3 -- admitted: no status, the pass stays unseen
end
local kind = entry(c, user, M_ENTRY.STATUS, '0', '')
entry_flush(c)
local ok = kind == K_ENTRY.WAITING or kind == K_ENTRY.PREQUEUE or kind == K_ENTRY.HELD
if kind == K_ENTRY.CLOSED then
  -- still in line or the pre-queue: a reopened sale admits them
  ok = redis.call('ZSCORE', K_WAITING, user) or redis.call('ZSCORE', K_PRE, user) or
    (c.grp and c.G.in_line(user))
end
if not ok then
  return -3
end
if sub == '' then
  redis.call('HDEL', K_PUSH, user)
else
  redis.call('HSET', K_PUSH, user, sub)
end
return 0
