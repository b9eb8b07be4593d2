# Folds the named rows of src/store/redis/scripts.def (the one declaration
# of the Redis scripts' arguments, reply elements and constants;
# script_rows.h reads the same rows for C) into the Lua text of the scripts,
# at build time: the names cost Redis nothing at run time.
# Usage: cmake -DDEF=scripts.def -DSRC=dir -DOUT=dir -DLUA="scripts/a.lua;..."
#              -DSCRIPTS="entry;admit;..." -P script_rows.cmake
# Writes, for each LUA file SRC/<f>, OUT/<f>: its text with every
#   T.NAME    (T a table of rows: A_*, R_*, B_*) -> NAME's 1-based index
#   T.NAME    (T a table of constants: M_*, K_*) -> its value ('1' for a
#             string constant, 1 or (-1) for an integer one)
#   T._N      -> the table's length
#   T._NEW    -> a new reply of T, every element at its type's zero: a table
#                constructor {0, '', {}, ...} (i 0, s '', a {})
# folded to its literal; X.NAME the same when the file has the top-level line
#   local X, Y = T, U
# (an alias, only tables on the right; the line is emptied). Comments are
# emptied first (lines kept, so Redis's error lines are the source's; a
# '--' inside a quoted string is no comment). A T.NAME that scripts.def
# does not declare (an unknown T of the form A_*, R_*, B_*, K_*, M_* too),
# a table or alias used other than as T.NAME (it does not exist at run
# time), a T.NAME inside a quoted string, or a long bracket ([[, [=[: a
# string or comment over several lines) stops the build with the file and
# the name (tests/ops/check_script_rows.py).
# Also writes OUT/scripts/rows/<script>.lua for each script: its tables as
# Lua comments (what the numbers of its text mean), the first part of its
# text in Redis (a comment: free at run time).
cmake_policy(VERSION 3.17)
file(STRINGS "${DEF}" lines REGEX "^WR_SCRIPT_(TABLE|ROW|VALUE|END)\\(")
set(tables "")
foreach(line IN LISTS lines)
  if(line MATCHES "^WR_SCRIPT_TABLE\\(([A-Z0-9_]+), ([a-z_ *]+)\\)$")
    set(t ${CMAKE_MATCH_1})
    list(APPEND tables ${t})
    set(who_${t} " ${CMAKE_MATCH_2} ")
    set(body_${t} "")
    set(new_${t} "")
    set(n_${t} 0)
    set(const_${t} 0)
  elseif(line MATCHES "^WR_SCRIPT_ROW\\(([A-Z0-9_]+), ([A-Z0-9_]+), ([isa])\\)$")
    set(t ${CMAKE_MATCH_1})
    math(EXPR n_${t} "${n_${t}} + 1")
    set(v_${t}.${CMAKE_MATCH_2} ${n_${t}})
    string(APPEND body_${t} "${CMAKE_MATCH_2} = ${n_${t}}, ")
    if(CMAKE_MATCH_3 STREQUAL "i")
      string(APPEND new_${t} "0, ")
    elseif(CMAKE_MATCH_3 STREQUAL "s")
      string(APPEND new_${t} "'', ")
    else()
      string(APPEND new_${t} "{}, ")
    endif()
  elseif(line MATCHES "^WR_SCRIPT_VALUE\\(([A-Z0-9_]+), ([A-Z0-9_]+), (-?[0-9]+), ([is])\\)$")
    set(t ${CMAKE_MATCH_1})
    set(const_${t} 1)
    set(name ${CMAKE_MATCH_2})
    set(v ${CMAKE_MATCH_3})
    if(CMAKE_MATCH_4 STREQUAL "s")
      set(v "'${v}'")
    elseif(v MATCHES "^-")
      set(v "(${v})")
    endif()
    set(v_${t}.${name} "${v}")
    string(APPEND body_${t} "${name} = ${v}, ")
  elseif(line MATCHES "^WR_SCRIPT_END\\(([A-Z0-9_]+)\\)$")
  else()
    message(FATAL_ERROR "${DEF}: a row not in the form script_rows.cmake reads: ${line}")
  endif()
endforeach()
foreach(t IN LISTS tables)
  if(NOT const_${t})
    set(v_${t}._N ${n_${t}})
    string(REGEX REPLACE ", $" "" new "${new_${t}}")
    set(v_${t}._NEW "{${new}}")
  endif()
endforeach()

# writes text to path when it differs (no rebuild of what did not change)
function(write_if_different path text)
  file(WRITE "${path}.tmp" "${text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${path}.tmp" "${path}")
  file(REMOVE "${path}.tmp")
endfunction()

set(id "[A-Za-z_][A-Za-z0-9_]*")
# a Lua short string, single- and double-quoted (escapes included)
set(sq "'([^'\\\\\n]|\\\\.)*'")
set(dq "\"([^\"\\\\\n]|\\\\.)*\"")
foreach(f IN LISTS LUA)
  file(READ "${SRC}/${f}" text)
  # comments emptied (lines kept: Redis's error lines are the source's):
  # on each line, the first '--' outside a short string ('...', "...",
  # with their escapes) to the end of the line; a '--' inside a string
  # stays. Long brackets ([[, [=[, ...: strings and comments that span
  # lines) are refused: this step reads lines.
  if(text MATCHES "\\[=*\\[")
    message(FATAL_ERROR "${SRC}/${f}: a long string or comment ([[ or [=[): "
                        "script_rows.cmake empties comments by line, it reads none")
  endif()
  string(REGEX REPLACE "\n(([^'\"\n-]|-[^-'\"\n]|-?${sq}|-?${dq})*)--[^\n]*" "\n\\1" text
                       "\n${text}")
  string(SUBSTRING "${text}" 1 -1 text)
  # a T.NAME inside a string would be folded there too: refused
  string(REGEX MATCHALL "${sq}|${dq}" strs "${text}")
  foreach(str IN LISTS strs)
    if(str MATCHES "(^|[^A-Za-z0-9_.])[ARBKM]_[A-Z0-9_]+\\.")
      message(FATAL_ERROR "${SRC}/${f}: ${str}: a table of scripts.def named in a string "
                          "(script_rows.cmake would fold it there)")
    endif()
  endforeach()
  # aliases: a top-level "local X, Y = T, U" naming tables only
  set(aliases "")
  string(REGEX MATCHALL "\nlocal [A-Za-z0-9_, ]+ = [A-Z0-9_, ]+\n" decls "\n${text}")
  foreach(d IN LISTS decls)
    string(STRIP "${d}" d)
    string(REGEX REPLACE "^local ([^=]+) = (.+)$" "\\1" lhs "${d}")
    string(REGEX REPLACE "^local ([^=]+) = (.+)$" "\\2" rhs "${d}")
    string(REPLACE ", " ";" lhs "${lhs}")
    string(REPLACE ", " ";" rhs "${rhs}")
    set(named 0)
    foreach(r IN LISTS rhs)
      if(r IN_LIST tables)
        math(EXPR named "${named} + 1")
      endif()
    endforeach()
    if(named EQUAL 0)
      continue()
    endif()
    list(LENGTH lhs nl)
    list(LENGTH rhs nr)
    if(NOT named EQUAL nr OR NOT nl EQUAL nr)
      message(FATAL_ERROR "${SRC}/${f}: '${d}': an alias of a table of scripts.def names "
                          "tables only, one per name (script_rows.cmake)")
    endif()
    foreach(a r IN ZIP_LISTS lhs rhs)
      if(a IN_LIST aliases OR a IN_LIST tables)
        message(FATAL_ERROR "${SRC}/${f}: '${a}' aliased twice (script_rows.cmake)")
      endif()
      list(APPEND aliases ${a})
      set(alias_${a} ${r})
    endforeach()
    string(REPLACE "${d}\n" "\n" text "${text}")
  endforeach()
  # every T.NAME and X.NAME
  string(REGEX MATCHALL "${id}\\.${id}" refs "${text}")
  list(REMOVE_DUPLICATES refs)
  foreach(ref IN LISTS refs)
    string(REGEX REPLACE "\\..*$" "" head "${ref}")
    string(REGEX REPLACE "^[^.]*\\." "" field "${ref}")
    if(head IN_LIST aliases)
      set(t ${alias_${head}})
    elseif(head IN_LIST tables)
      set(t ${head})
    elseif(head MATCHES "^[ARBKM]_[A-Z0-9_]+$")
      message(FATAL_ERROR "${SRC}/${f}: '${ref}': ${head} is not a table of "
                          "src/store/redis/scripts.def (script_rows.cmake)")
    else()
      continue()
    endif()
    if(NOT DEFINED v_${t}.${field})
      message(FATAL_ERROR "${SRC}/${f}: '${ref}': ${t} has no row ${field} in "
                          "src/store/redis/scripts.def (script_rows.cmake)")
    endif()
    set(v "${v_${t}.${field}}")
    # one fold per boundary character: again until none is left
    set(before "")
    while(NOT before STREQUAL text)
      set(before "${text}")
      string(REGEX REPLACE "(^|[^A-Za-z0-9_.])${head}\\.${field}([^A-Za-z0-9_]|$)" "\\1${v}\\2"
                           text "${text}")
    endwhile()
  endforeach()
  # no table or alias left in the code: none exists at run time
  foreach(name IN LISTS tables aliases)
    if(text MATCHES "(^|[^A-Za-z0-9_.])${name}([^A-Za-z0-9_]|$)")
      message(FATAL_ERROR "${SRC}/${f}: '${name}' used other than as ${name}.NAME: "
                          "the rows of scripts.def exist at build time only (script_rows.cmake)")
    endif()
  endforeach()
  write_if_different("${OUT}/${f}" "${text}")
endforeach()

foreach(s IN LISTS SCRIPTS)
  set(out "-- ${s}.lua: the rows of scripts.def folded into this text by\n")
  string(APPEND out "-- cmake/script_rows.cmake (T.NAME -> the value below; T._N the length)\n")
  foreach(t IN LISTS tables)
    string(FIND "${who_${t}}" " ${s} " mine)
    string(FIND "${who_${t}}" " * " all)
    if(mine EQUAL -1 AND all EQUAL -1)
      continue()
    endif()
    if(const_${t})
      string(APPEND out "-- ${t} = {${body_${t}}}\n")
    else()
      string(APPEND out "-- ${t} = {${body_${t}}_N = ${n_${t}}}\n")
    endif()
  endforeach()
  write_if_different("${OUT}/scripts/rows/${s}.lua" "${out}")
endforeach()
