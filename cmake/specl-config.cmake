# specl-config.cmake - find_package(specl) for an installed specl: the
# imported executable specl::specl and specl_generate()
# (SpeclGenerate.cmake). Installed by `make install` in
# PREFIX/lib/cmake/specl; PREFIX is found from this file's place, so the
# installed tree may be moved.

get_filename_component(_specl_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.."
                       ABSOLUTE)
set(_specl_executable "${_specl_prefix}/bin/specl")
if(NOT EXISTS "${_specl_executable}")
    set(specl_FOUND FALSE)
    set(specl_NOT_FOUND_MESSAGE
        "${_specl_executable} is missing: reinstall specl (make install)")
    return()
endif()

if(NOT TARGET specl::specl)
    add_executable(specl::specl IMPORTED)
    set_target_properties(specl::specl PROPERTIES
                          IMPORTED_LOCATION "${_specl_executable}")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/SpeclGenerate.cmake")
unset(_specl_prefix)
unset(_specl_executable)
