# Checks that the base library stays pure: no base source includes, directly
# or through one of our headers (#include "x.h" found in ROOT), a header of
# libevent, hiredis, libinih or libssl (libcrypto's are allowed). On
# success writes STAMP; on a violation stops with the chain of includes
# that brings the dependency in.
# Usage: cmake -DROOT=src -DFILES="a.c;b.c" -DSTAMP=file -P layering.cmake
cmake_minimum_required(VERSION 3.18)
set(forbidden "^(event2/|hiredis/|ini\\.h$|openssl/ssl\\.h$)")
set(errors "")
foreach(src ${FILES})
  get_filename_component(name ${src} NAME)
  # Worklist of (file, how we got there); each of our headers read once.
  set(todo ${name})
  set(via_${name} "${name}")
  set(seen "")
  while(todo)
    list(POP_FRONT todo f)
    if(f IN_LIST seen OR NOT EXISTS ${ROOT}/${f})
      continue()
    endif()
    list(APPEND seen ${f})
    file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line ${lines})
      if(line MATCHES "<([^>]+)>")
        set(sys ${CMAKE_MATCH_1})
        if(sys MATCHES "${forbidden}")
          string(APPEND errors "  ${via_${f}} includes <${sys}>\n")
        endif()
      elseif(line MATCHES "\"([^\"]+)\"")
        set(h ${CMAKE_MATCH_1})
        if(NOT DEFINED via_${h})
          set(via_${h} "${via_${f}} -> ${h}")
        endif()
        list(APPEND todo ${h})
      endif()
    endforeach()
  endwhile()
  # Forget the paths of this source before the next one.
  foreach(f ${seen})
    unset(via_${f})
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "layering: the base library (WR_BASE_SRC in CMakeLists.txt) builds with "
                      "jansson and libcrypto only, but\n${errors}"
                      "Move the module to WR_SERVER_SRC, or keep the dependency out of the "
                      "headers it includes.")
endif()
file(WRITE ${STAMP} "ok\n")
