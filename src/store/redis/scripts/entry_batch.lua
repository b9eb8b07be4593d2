-- entry_batch.lua - the joins and statuses of one queue that arrived in one
-- event-loop iteration, answered in one call (lib.lua prepended; each
-- request runs lib.lua's entry(), as entry.lua runs it for one).
-- ARGV: A_ENTRY_BATCH (scripts.def: the known config version, '0' =
-- none; COMMIT_SEED and COMMIT_HASH, as entry.lua's, for the call), then
-- one A_BATCH_REQ per request: USER, MODE, PREQ_KEY, LOG_ID, as
-- entry.lua's.
-- Reply: R_ENTRY_BATCH (VERSION, JSON: as entry.lua's, 0 and '' when there
-- is no queue; STOCK_LEFT: as entry.lua's, after the call, -1: no stock or
-- no queue), then answer_1 ... answer_n, one flat array (a nested array
-- per answer would cost Redis and hiredis an object per answer). answer_i
-- is entry.lua's reply without its config part, as only the elements its
-- kind uses, one B_ table of scripts.def by kind: B_WAITING (WAITING),
-- B_ADMITTED (ADMITTED), B_COUNT (HELD: the line's count, position 1;
-- FULL; SUBSCRIBED as entry.lua's, also in B_WAITING), B_CLOSED (CLOSED:
-- why, 1 closed, 2 sold out), B_KIND
-- (PASSTHROUGH, PREQUEUE, PREQUEUE_NEW: as entry.lua's, NOT_IN_QUEUE,
-- and NO_QUEUE for every request
-- when there is no queue); or one error reply, when request i raised an
-- error. On a queue with priority groups, a WAITING, PREQUEUE, HELD or
-- ADMITTED answer is followed by a B_GROUP (its group part); then a
-- WAITING, PREQUEUE or HELD answer of someone in the public log's line by
-- a B_RECEIPT (their join leaf's index, their log id, and the leaf's
-- hash or, not hashed yet, its bytes: lib_log.lua log_receipt).
-- Atomicity: the requests run one after the other in this one script, so
-- each sees the writes of the ones before it, exactly as n calls of
-- entry.lua sent back to back would; nothing runs between them. They share
-- one Redis TIME (the call is one instant; n calls back to back would
-- differ by microseconds). A request
-- that raises an error (pcall) answers that error alone, with whatever it
-- wrote before the error kept, as a failed entry.lua call keeps it; the
-- next one runs on.
local K, Q = K_ENTRY, A_BATCH_REQ
local c = entry_config(ARGV[A_ENTRY_BATCH.VERSION])
if c then
  c.seed, c.seed_hash = ARGV[A_ENTRY_BATCH.COMMIT_SEED], ARGV[A_ENTRY_BATCH.COMMIT_HASH]
end
local out = R_ENTRY_BATCH._NEW
out[R_ENTRY_BATCH.STOCK_LEFT] = -1
local n = R_ENTRY_BATCH._N
if c then
  out[R_ENTRY_BATCH.VERSION], out[R_ENTRY_BATCH.JSON] = c.version, c.json
end
-- appends an answer of len elements (a B_ table's _N): returns where it
-- starts (its element NAME at at + B.NAME); the caller fills it
local function answer(len)
  local at = n
  n = n + len
  return at
end
for i = A_ENTRY_BATCH._N + 1, #ARGV - Q._N + 1, Q._N do
  if not c then
    out[answer(B_KIND._N) + B_KIND.KIND] = K.NO_QUEUE
  else
    local user = ARGV[i + Q.USER - 1]
    local ok, kind, position, waiting, jti, iat, exp, hd, od, passed = pcall(entry, c, user,
      ARGV[i + Q.MODE - 1], ARGV[i + Q.PREQ_KEY - 1], ARGV[i + Q.LOG_ID - 1])
    local added = ok and kind == K.PREQUEUE_NEW -- sent as it is; PREQUEUE for the checks
    if added then
      kind = K.PREQUEUE
    end
    if not ok then
      n = n + 1
      out[n] = type(kind) == 'table' and kind.err and kind or {err = tostring(kind)}
    elseif kind == K.WAITING then
      local at = answer(B_WAITING._N)
      out[at + B_WAITING.KIND], out[at + B_WAITING.POSITION] = kind, position
      out[at + B_WAITING.WAITING], out[at + B_WAITING.HEAD_DUE_US] = waiting, hd or -1
      out[at + B_WAITING.OWN_DUE_US], out[at + B_WAITING.PASSED] = od or -1, passed or -1
      out[at + B_WAITING.SUBSCRIBED] = entry_subscribed(c, user, kind)
    elseif kind == K.ADMITTED then
      local at = answer(B_ADMITTED._N)
      out[at + B_ADMITTED.KIND], out[at + B_ADMITTED.JTI] = kind, jti
      out[at + B_ADMITTED.IAT_US], out[at + B_ADMITTED.EXP_US] = iat, exp
    elseif kind == K.FULL or kind == K.HELD then
      local at = answer(B_COUNT._N)
      out[at + B_COUNT.KIND], out[at + B_COUNT.WAITING] = kind, waiting
      out[at + B_COUNT.SUBSCRIBED] = entry_subscribed(c, user, kind)
    elseif kind == K.CLOSED then
      local at = answer(B_CLOSED._N)
      out[at + B_CLOSED.KIND], out[at + B_CLOSED.WHY] = kind, position
    else
      out[answer(B_KIND._N) + B_KIND.KIND] = added and K.PREQUEUE_NEW or kind
    end
    if ok and c.grp then
      -- the group part (lib_group.lua G.entry_part), right after its answer
      local line, admitted_60s, first = c.G.entry_part(c, kind)
      if line then
        local at = answer(B_GROUP._N)
        out[at + B_GROUP.KIND], out[at + B_GROUP.LINE] = K.GROUP, line
        out[at + B_GROUP.ADMITTED_60S], out[at + B_GROUP.FIRST_WAITING] = admitted_60s, first
      end
    end
    if ok and LOG.on and (kind == K.WAITING or kind == K.PREQUEUE or kind == K.HELD) then
      -- the public log's receipt, as one more answer right after its own
      local ri, ru, rh, rl = log_receipt(user)
      if ri >= 0 then
        local at = answer(B_RECEIPT._N)
        out[at + B_RECEIPT.KIND], out[at + B_RECEIPT.INDEX] = K.RECEIPT, ri
        out[at + B_RECEIPT.U], out[at + B_RECEIPT.HASH], out[at + B_RECEIPT.LEAF] = ru, rh, rl
      end
    end
  end
end
if c then
  entry_flush(c)
  out[R_ENTRY_BATCH.STOCK_LEFT] = stock_left() or -1
end
return out
