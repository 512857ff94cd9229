# stratasim_simgrid_private_headers(TARBALL URL DEST HEADERS...): extracts HEADERS (paths inside
# the release, e.g. src/kernel/actor/ActorImpl.hpp) of SimGrid 3.32's source into
# DEST/simgrid-3.32. TARBALL is a local simgrid_3.32.orig.tar.xz; when empty, the file is
# downloaded from URL into DEST. Either way its SHA-256 must be that of Debian's
# simgrid_3.32.orig.tar.xz (as listed in simgrid_3.32-2.dsc): these headers describe the exact
# layout of the installed library's objects. Works in a project and in script mode (cmake -P),
# which is how tests/configure_test.cpp checks its error messages.
set(STRATASIM_SIMGRID_SOURCE_SHA256
    4b413d8e9d9b29b8e086b2f3edaec5b1149d7eb52b2e134f1ed13d30891ece7b)

function(stratasim_simgrid_private_headers tarball url dest)
  if(NOT tarball)
    set(tarball "${dest}/simgrid_3.32.orig.tar.xz")
    message(STATUS "stratasim: fetching SimGrid 3.32's source for its private headers: ${url}")
    file(DOWNLOAD "${url}" "${tarball}" STATUS status TIMEOUT 300)
    list(GET status 0 code)
    if(NOT code EQUAL 0)
      file(REMOVE "${tarball}")
      message(FATAL_ERROR "stratasim: could not download ${url} (${status}). Give a local "
              "copy with -DSTRATASIM_SIMGRID_SOURCE_TARBALL=FILE, or build without taking "
              "activities off SimGrid's list (slower large simulations, same results) with "
              "-DSTRATASIM_SIMGRID_LIST_TRIM=OFF")
    endif()
  endif()
  if(NOT EXISTS "${tarball}")
    message(FATAL_ERROR "stratasim: STRATASIM_SIMGRID_SOURCE_TARBALL: ${tarball} does not exist")
  endif()
  file(SHA256 "${tarball}" got)
  if(NOT got STREQUAL STRATASIM_SIMGRID_SOURCE_SHA256)
    message(FATAL_ERROR "stratasim: ${tarball} has SHA-256 ${got}, not Debian's "
            "simgrid_3.32.orig.tar.xz (${STRATASIM_SIMGRID_SOURCE_SHA256})")
  endif()
  set(members "")
  foreach(h IN LISTS ARGN)
    list(APPEND members "simgrid-3.32/${h}")
  endforeach()
  file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${dest}" PATTERNS ${members})
endfunction()
