# Checks the layers of src/ (CMakeLists.txt, WR_LAYERS): every #include "x/y.h"
# of a file in folder F names a header in a folder that F's rule allows, and
# no file of a pure layer includes, directly or through one of our headers, a
# header of libevent, hiredis, libinih or libssl (libcrypto's are allowed).
# On success writes STAMP; on a violation stops with every offending line
# (for the pure check, the chain of includes that brings the dependency in).
# Usage: cmake -DROOT=src -DFILES="core/queue.c;..." \
#          -DRULES="core=1=base,core;..." -DSTAMP=file -P layering.cmake
cmake_minimum_required(VERSION 3.18)
set(forbidden "^(event2/|hiredis/|ini\\.h$|openssl/ssl\\.h$)")
set(errors "")
foreach(rule ${RULES})
  string(REPLACE "=" ";" parts "${rule}")
  list(GET parts 0 layer)
  list(GET parts 1 pure)
  list(GET parts 2 allow)
  string(REPLACE "," ";" allow "${allow}")
  string(REPLACE "/" "_" key "${layer}")
  set(allow_${key} ${allow})
  set(pure_${key} ${pure})
endforeach()

# The files at the top of src/ (main.c and what is split from it) are the
# layer "main"; their headers are included by bare name ("app.h").
function(layer_of path out)
  get_filename_component(d ${path} DIRECTORY)
  if(d STREQUAL "")
    set(d main)
  endif()
  set(${out} ${d} PARENT_SCOPE)
endfunction()

# 1. Folder rule: each quoted include names its folder; that folder must be
#    allowed for the including file's folder.
foreach(f ${FILES})
  layer_of(${f} dir)
  string(REPLACE "/" "_" key "${dir}")
  file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${lines})
    if(line MATCHES "\"([^\"]+)\"")
      set(h ${CMAKE_MATCH_1})
      layer_of(${h} hdir)
      if(NOT EXISTS ${ROOT}/${h})
        string(APPEND errors "  src/${f} includes \"${h}\": not a path from src/\n")
      elseif(NOT hdir IN_LIST allow_${key})
        string(APPEND errors "  src/${f} (layer ${dir}) includes \"${h}\" (layer ${hdir}), "
                             "which its layer may not (allowed: ${allow_${key}})\n")
      endif()
    endif()
  endforeach()
endforeach()

# 2. Purity: a file of a pure layer, and everything of ours it includes.
foreach(src ${FILES})
  layer_of(${src} dir)
  string(REPLACE "/" "_" key "${dir}")
  if(NOT pure_${key})
    continue()
  endif()
  string(MAKE_C_IDENTIFIER "${src}" id)
  set(todo ${src})
  set(via_${id} "${src}")
  set(seen "")
  while(todo)
    list(POP_FRONT todo f)
    if(f IN_LIST seen OR NOT EXISTS ${ROOT}/${f})
      continue()
    endif()
    list(APPEND seen ${f})
    string(MAKE_C_IDENTIFIER "${f}" fid)
    file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line ${lines})
      if(line MATCHES "<([^>]+)>")
        set(sys ${CMAKE_MATCH_1})
        if(sys MATCHES "${forbidden}")
          string(APPEND errors "  ${via_${fid}} includes <${sys}> (layer ${dir} is pure)\n")
        endif()
      elseif(line MATCHES "\"([^\"]+)\"")
        set(h ${CMAKE_MATCH_1})
        string(MAKE_C_IDENTIFIER "${h}" hid)
        if(NOT DEFINED via_${hid})
          set(via_${hid} "${via_${fid}} -> ${h}")
        endif()
        list(APPEND todo ${h})
      endif()
    endforeach()
  endwhile()
  foreach(f ${seen})
    string(MAKE_C_IDENTIFIER "${f}" fid)
    unset(via_${fid})
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "layering (CMakeLists.txt, WR_LAYERS; docs/DESIGN.md, \"Modules\"):\n${errors}"
                      "Move the module to the layer it belongs to, or keep the dependency out "
                      "of the headers it includes.")
endif()
file(WRITE ${STAMP} "ok\n")
