-- entry_batch.lua - the joins and statuses of one queue that arrived in one
-- event-loop iteration, answered in one call (lib.lua prepended; each
-- request runs lib.lua's entry(), as entry.lua runs it for one).
-- ARGV: A_ENTRY_BATCH (scripts.def: the known config version, '0' =
-- none), then one A_BATCH_REQ per request: USER, MODE, PREQ_KEY, as
-- entry.lua's.
-- Reply: R_ENTRY_BATCH (VERSION, JSON: as entry.lua's, 0 and '' when there
-- is no queue; STOCK_LEFT: as entry.lua's, after the call, -1: no stock or
-- no queue), then answer_1 ... answer_n, one flat array (a nested array
-- per answer would cost Redis and hiredis an object per answer). answer_i
-- is entry.lua's reply without its config part, as only the elements its
-- kind uses, one B_ table of scripts.def by kind: B_WAITING (WAITING),
-- B_ADMITTED (ADMITTED), B_COUNT (HELD: the line's count, position 1;
-- FULL), B_CLOSED (CLOSED: why, 1 closed, 2 sold out), B_KIND
-- (PASSTHROUGH, PREQUEUE, NOT_IN_QUEUE, and NO_QUEUE for every request
-- when there is no queue); or one error reply, when request i raised an
-- error.
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
local out = reply_of(R_ENTRY_BATCH)
out[R_ENTRY_BATCH.STOCK_LEFT] = -1
local n = R_ENTRY_BATCH._N
if c then
  out[R_ENTRY_BATCH.VERSION], out[R_ENTRY_BATCH.JSON] = c.version, c.json
end
-- appends answer table B with its kind; the caller fills the rest
local function answer(B, kind)
  local at = n
  out[at + B.KIND] = kind
  n = n + B._N
  return at
end
for i = A_ENTRY_BATCH._N + 1, #ARGV - Q._N + 1, Q._N do
  if not c then
    answer(B_KIND, K.NO_QUEUE)
  else
    local ok, kind, position, waiting, jti, iat, exp, hd, od, passed = pcall(entry, c,
      ARGV[i + Q.USER - 1], ARGV[i + Q.MODE - 1], ARGV[i + Q.PREQ_KEY - 1])
    if not ok then
      n = n + 1
      out[n] = type(kind) == 'table' and kind.err and kind or {err = tostring(kind)}
    elseif kind == K.WAITING then
      local at, B = answer(B_WAITING, kind), B_WAITING
      out[at + B.POSITION], out[at + B.WAITING] = position, waiting
      out[at + B.HEAD_DUE_US], out[at + B.OWN_DUE_US], out[at + B.PASSED] = hd or -1, od or -1,
        passed or -1
    elseif kind == K.ADMITTED then
      local at, B = answer(B_ADMITTED, kind), B_ADMITTED
      out[at + B.JTI], out[at + B.IAT_US], out[at + B.EXP_US] = jti, iat, exp
    elseif kind == K.FULL or kind == K.HELD then
      local at = answer(B_COUNT, kind)
      out[at + B_COUNT.WAITING] = waiting
    elseif kind == K.CLOSED then
      local at = answer(B_CLOSED, kind)
      out[at + B_CLOSED.WHY] = position
    else
      answer(B_KIND, kind)
    end
  end
end
if c then
  entry_flush(c)
  out[R_ENTRY_BATCH.STOCK_LEFT] = stock_left() or -1
end
return out
