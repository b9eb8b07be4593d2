-- lib_nogroup.lua - lib_group.lua's stand-in for the polls of a queue
-- cached without priority groups (store_redis_batch.c sends entry.lua and
-- entry_batch.lua with it, and without the group keys): group_lib reads
-- the config hash's grp and finds none, or raises WRGROUPS (the queue got
-- groups since: nothing written; the store sends the call again with
-- lib_group.lua and the keys). A poll of a queue without groups makes
-- none of lib_group.lua's functions (each function a script defines is
-- made anew on every call, its captured locals looked up one by one).
local function group_lib(v)
  GRP.loaded = true
  if v and v ~= '' then
    error({err = 'WRGROUPS the queue has priority groups: send their keys'})
  end
  return GRP
end
