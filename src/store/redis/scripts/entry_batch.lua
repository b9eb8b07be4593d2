-- entry_batch.lua - the joins and statuses of one queue that arrived in one
-- event-loop iteration, answered in one call (lib.lua prepended; each
-- request runs lib.lua's entry(), as entry.lua runs it for one).
-- ARGV[1] known config version ('0' = none); then for request i (1..n)
-- ARGV[3i - 1] user, ARGV[3i] its mode, as entry.lua's ARGV[3] ('1' join,
-- '2' join by the queue page, '0' status, '3' quiet status), ARGV[3i + 1]
-- its pre-queue key, as entry.lua's ARGV[4].
-- Reply: {version, json, stock_left, answer_1 ... answer_n}, one flat array (a nested
-- array per answer would cost Redis and hiredis an object per answer):
--   version, json: as entry.lua's (0 and '' when there is no queue);
--   stock_left: as entry.lua's, after the call (-1: no stock or no queue);
--   answer_i: entry.lua's reply without its config part, as only the
--   elements its kind uses:
--     1 WAITING      1, position, waiting, head_due_us, own_due_us, passed
--     2 ADMITTED     2, jti, iat_us, exp_us
--     3 PASSTHROUGH  3
--     4 PREQUEUE     4
--     5 HELD         5, waiting (WAITING held, position 1)
--     6 CLOSED       6, why (1 closed, 2 sold out)
--    -1 no queue    -1  (every request, when there is no queue)
--    -2 line full   -2, waiting
--    -3 not in queue -3
--   or one error reply, when request i raised an error.
-- Atomicity: the requests run one after the other in this one script, so
-- each sees the writes of the ones before it, exactly as n calls of
-- entry.lua sent back to back would; nothing runs between them. They share
-- one Redis TIME (the call is one instant; n calls back to back would
-- differ by microseconds). A request
-- that raises an error (pcall) answers that error alone, with whatever it
-- wrote before the error kept, as a failed entry.lua call keeps it; the
-- next one runs on.
local c = entry_config(ARGV[1])
local out = {0, '', -1}
local n = 3
if c then
  out[1], out[2] = c.version, c.json
end
for i = 2, #ARGV - 2, 3 do
  if not c then
    n = n + 1
    out[n] = -1
  else
    local ok, kind, position, waiting, jti, iat, exp, hd, od, passed = pcall(entry, c, ARGV[i],
      ARGV[i + 1], ARGV[i + 2])
    if not ok then
      n = n + 1
      out[n] = type(kind) == 'table' and kind.err and kind or {err = tostring(kind)}
    elseif kind == 1 then
      out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5], out[n + 6] = 1, position, waiting,
        hd or -1, od or -1, passed or -1
      n = n + 6
    elseif kind == 2 then
      out[n + 1], out[n + 2], out[n + 3], out[n + 4] = 2, jti, iat, exp
      n = n + 4
    elseif kind == -2 or kind == 5 then
      out[n + 1], out[n + 2] = kind, waiting
      n = n + 2
    elseif kind == 6 then
      out[n + 1], out[n + 2] = kind, position
      n = n + 2
    else
      n = n + 1
      out[n] = kind
    end
  end
end
if c then
  entry_flush(c)
  out[3] = stock_left() or -1
end
return out
