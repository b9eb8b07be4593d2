-- entry.lua - one join or status (lib.lua prepended; the rules are lib.lua's
-- entry(), shared with entry_batch.lua).
-- ARGV: A_ENTRY (scripts.def): USER; VERSION, the known config version
-- ('0' = none); MODE, an M_ENTRY: JOIN (add when absent), JOIN_PAGE (join
-- by the queue page), STATUS, STATUS_QUIET (lib.lua's entry() says what
-- each does, people who stop asking and the sale opening's pre-queue
-- included); PREQ_KEY (joins) the pre-queue key of a shuffled pre-queue: a
-- random integer below 2^52 from waitroomd's CSPRNG (Lua's math.random is
-- not cryptographic, and a script must not draw randomness); '0' for a
-- status; LOG_ID (joins of a queue with publicLog) the user's log id
-- (lib_log.lua), '' otherwise; COMMIT_SEED, COMMIT_HASH (joins of a queue
-- whose opening may need its commit: publicLog, preQueueShuffle and
-- opensAt) a fresh 32-byte seed and its SHA-256, hex, from waitroomd's
-- CSPRNG, for the commit of the first pre-queue join (lib_log.lua
-- log_commit), '' otherwise (such a join is refused, WRLOGID).
-- Reply: R_ENTRY (scripts.def), every element always sent:
--   KIND: a K_ENTRY: WAITING, ADMITTED, PASSTHROUGH, PREQUEUE,
--   PREQUEUE_NEW (PREQUEUE of a join that added the user: to the
--   pre-queue, or before opensAt to a group's line), HELD (POSITION 1),
--   CLOSED (POSITION: 1 closed, 2 sold out), NO_QUEUE, FULL
--   (WAITING set), NOT_IN_QUEUE; CODE (a join into a group,
--   entry_group.lua: POSITION why the presale code buys nothing,
--   core/groups.h wr_code_reason_t).
--   VERSION, JSON: the config part.
--   STOCK_LEFT: what is left of the stock after the call, -1 without one.
--   PASSED: WAITING of someone already in line within the first 257 of
--   it: how many of the people ahead admission will pass over (lib.lua
--   entry_passed, store.h passed_ahead); -1 otherwise.
--   HEAD_DUE_US, OWN_DUE_US: after a join that added the user to a line
--   (WAITING; the one sign of it there), us from
--   now until the first of the line and this user may be admitted (the
--   admission delay, queue.h wr_queue_admit_due_us, as admit.lua applies
--   it); -1 otherwise.
--   RECEIPT_INDEX, RECEIPT_U, RECEIPT_HASH, RECEIPT_LEAF: WAITING,
--   PREQUEUE and HELD of someone in the public log's line: their join
--   leaf's index, their log id, and the leaf's hash once the signer hashed
--   it (32 bytes; RECEIPT_LEAF '') or else the leaf's bytes (RECEIPT_HASH
--   ''): lib_log.lua log_receipt; -1, '', '', '' otherwise.
--   SUBSCRIBED: 1 for WAITING or HELD with a live Web Push subscription
--   (lib_entry.lua entry_subscribed), else 0.
--   GROUP_KIND, GROUP_LINE, GROUP_ADMITTED_60S, GROUP_FIRST_WAITING: on a
--   queue with priority groups, the group part of a WAITING, PREQUEUE,
--   HELD or ADMITTED answer, as B_GROUP's elements (lib_group.lua
--   G.entry_part); 0 (GROUP_KIND 0: none) otherwise.
-- entry_group.lua, prepended, makes this script a join into a group
-- (ENTRY_G: entry()'s g).
local R, A = R_ENTRY, A_ENTRY
local out = R._NEW
out[R.HEAD_DUE_US], out[R.OWN_DUE_US], out[R.STOCK_LEFT], out[R.PASSED] = -1, -1, -1, -1
local c = entry_config(ARGV[A.VERSION])
if not c then
  out[R.KIND] = K_ENTRY.NO_QUEUE
  return out
end
c.seed, c.seed_hash = ARGV[A.COMMIT_SEED], ARGV[A.COMMIT_HASH]
local user = ARGV[A.USER]
local kind, position, waiting, jti, iat, exp, head_due, own_due, passed = entry(c, user,
  ARGV[A.MODE], ARGV[A.PREQ_KEY], ARGV[A.LOG_ID], ENTRY_G)
entry_flush(c)
local added = kind == K_ENTRY.PREQUEUE_NEW -- sent as it is; PREQUEUE for the checks below
if added then
  kind = K_ENTRY.PREQUEUE
end
if kind == K_ENTRY.WAITING or kind == K_ENTRY.PREQUEUE or kind == K_ENTRY.HELD then
  out[R.RECEIPT_INDEX], out[R.RECEIPT_U], out[R.RECEIPT_HASH], out[R.RECEIPT_LEAF] =
    log_receipt(user)
else
  out[R.RECEIPT_INDEX], out[R.RECEIPT_U], out[R.RECEIPT_HASH], out[R.RECEIPT_LEAF] = -1, '', '', ''
end
out[R.KIND] = added and K_ENTRY.PREQUEUE_NEW or kind
out[R.VERSION], out[R.JSON] = c.version, c.json
out[R.POSITION], out[R.WAITING], out[R.JTI] = position, waiting, jti
out[R.IAT_US], out[R.EXP_US] = iat, exp
out[R.HEAD_DUE_US], out[R.OWN_DUE_US] = head_due or -1, own_due or -1
out[R.STOCK_LEFT], out[R.PASSED] = stock_left() or -1, passed or -1
out[R.SUBSCRIBED] = entry_subscribed(c, user, kind)
if c.grp then
  local line, admitted_60s, first = c.G.entry_part(c, kind)
  if line then
    out[R.GROUP_KIND], out[R.GROUP_LINE] = K_ENTRY.GROUP, line
    out[R.GROUP_ADMITTED_60S], out[R.GROUP_FIRST_WAITING] = admitted_60s, first
  end
end
return out
