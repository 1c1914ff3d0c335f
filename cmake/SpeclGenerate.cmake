# SpeclGenerate.cmake - specl_generate(): the kernels of specl op specs,
# generated at build time and compiled into a target.
#
#   specl_generate(TARGET <target> SPECS <a.yaml> [<b.yaml>...]
#                  [OUTPUT_DIR <dir>] [DB <tuning.yaml>]
#                  [TARGET_DEVICE cpu|gpu] [ALIAS])
#
# Asks specl which files `specl gen` writes for the specs (at configure
# time, so a kernel is never named twice: a kernel name that another
# call generates from another spec is an error naming both specs), adds
# a custom command that
# writes them (again whenever a spec, the database or specl changes), adds
# each kernel's NAME.c to <target>'s sources, <dir> to its include
# directories and links it to OpenCL. A spec that gains or loses a kernel
# re-runs the configuration: the new kernel is compiled, the removed one
# is no longer.
#
# OUTPUT_DIR: where the files go (default: specl/<target> in the current
# binary directory). DB: a tuning database (`specl gen --db`).
# TARGET_DEVICE: knobs for that kind of device alone (`specl gen
# --target`); without it each kernel carries the GPU and CPU defaults and
# picks at run time. ALIAS: a kernel alike an earlier one but for its name
# gets its header alone (`specl gen --alias`).
#
# specl itself: the imported target specl::specl (find_package(specl)),
# else the SPECL_EXECUTABLE cache variable, else `specl` on the PATH.
# Relative spec and database paths are taken from the current source
# directory. The project must enable C (NAME.c is C99).

if(CMAKE_VERSION VERSION_LESS 3.16)
    message(FATAL_ERROR "SpeclGenerate.cmake needs CMake 3.16 or newer")
endif()
include_guard(GLOBAL)

# Captured here: inside the function, CMAKE_CURRENT_LIST_DIR is the
# caller's. A build in the source tree's build/ is found first.
set(_specl_module_dir "${CMAKE_CURRENT_LIST_DIR}")

# The path of the specl to run, in OUT_VAR; a FATAL_ERROR when none.
function(_specl_executable out_var)
    if(TARGET specl::specl)
        get_target_property(exe specl::specl IMPORTED_LOCATION)
        get_target_property(configs specl::specl IMPORTED_CONFIGURATIONS)
        if(NOT exe AND configs)
            list(GET configs 0 config)
            get_target_property(exe specl::specl
                                IMPORTED_LOCATION_${config})
        endif()
    else()
        find_program(SPECL_EXECUTABLE specl
                     HINTS "${_specl_module_dir}/../build"
                     DOC "the specl code generator")
        set(exe "${SPECL_EXECUTABLE}")
    endif()
    if(NOT exe OR NOT EXISTS "${exe}")
        if(exe)
            set(why "${exe} does not exist")
        else()
            set(why "specl not found")
        endif()
        message(FATAL_ERROR
            "specl_generate: ${why}. Build specl (make in its source tree) "
            "and pass -DSPECL_EXECUTABLE=/path/to/specl, or install it "
            "(make install PREFIX=...) and call find_package(specl) with "
            "that prefix in CMAKE_PREFIX_PATH.")
    endif()
    set(${out_var} "${exe}" PARENT_SCOPE)
endfunction()

# The kernels named in OUTPUTS (the files `specl gen --list-outputs`
# names): each kernel's NAME, from its NAME.c, in OUT_VAR.
function(_specl_kernel_names out_var outputs)
    set(names "")
    foreach(file IN LISTS outputs)
        if(file MATCHES "\\.c$")
            get_filename_component(name "${file}" NAME_WE)
            list(APPEND names "${name}")
        endif()
    endforeach()
    set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

# Which of SPECS holds kernel NAME, in OUT_VAR (the first spec when specl
# cannot tell).
function(_specl_spec_of out_var specl name out_dir specs)
    list(GET specs 0 found)
    list(LENGTH specs n_specs)
    if(n_specs GREATER 1)
        foreach(spec IN LISTS specs)
            execute_process(
                COMMAND "${specl}" gen "${spec}" -o "${out_dir}"
                        --list-outputs
                RESULT_VARIABLE status
                OUTPUT_VARIABLE listed
                ERROR_QUIET)
            string(REPLACE "\n" ";" listed "${listed}")
            _specl_kernel_names(names "${listed}")
            if(status EQUAL 0 AND name IN_LIST names)
                set(found "${spec}")
                break()
            endif()
        endforeach()
    endif()
    set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

# Records the kernels of one specl_generate() call (TARGET, its SPECS,
# OUT_DIR, its OUTPUTS) for the whole configuration; a kernel name that
# an earlier call generated from another spec is a FATAL_ERROR naming
# both: its NAME_create and the other symbols of NAME.c would be defined
# twice (a link error), or two rules would write one file (one target).
# The same spec in two calls is one kernel.
function(_specl_claim_kernels target specl out_dir specs outputs)
    _specl_kernel_names(names "${outputs}")
    foreach(name IN LISTS names)
        set(key "_specl_kernel_${name}")
        get_property(claimed GLOBAL PROPERTY "${key}_target" SET)
        if(NOT claimed)
            set_property(GLOBAL PROPERTY "${key}_target" "${target}")
            set_property(GLOBAL PROPERTY "${key}_dir" "${out_dir}")
            set_property(GLOBAL PROPERTY "${key}_specs" "${specs}")
            continue()
        endif()
        get_property(first_target GLOBAL PROPERTY "${key}_target")
        get_property(first_dir GLOBAL PROPERTY "${key}_dir")
        get_property(first_specs GLOBAL PROPERTY "${key}_specs")
        _specl_spec_of(first_spec "${specl}" "${name}" "${first_dir}"
                       "${first_specs}")
        _specl_spec_of(spec "${specl}" "${name}" "${out_dir}" "${specs}")
        if(spec STREQUAL first_spec)
            continue()
        endif()
        message(FATAL_ERROR
            "specl_generate(${target}): kernel '${name}' of ${spec} is "
            "also generated by specl_generate(${first_target}) from "
            "${first_spec}: its ${name}_create and the rest of ${name}.c "
            "would be defined twice. Rename one of the kernels (a kernel "
            "name is one kernel in a project).")
    endforeach()
endfunction()

function(specl_generate)
    cmake_parse_arguments(PARSE_ARGV 0 arg "ALIAS"
                          "TARGET;OUTPUT_DIR;DB;TARGET_DEVICE" "SPECS")
    if(arg_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR
            "specl_generate: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT arg_TARGET OR NOT TARGET "${arg_TARGET}")
        message(FATAL_ERROR
            "specl_generate: TARGET must name an existing target "
            "(got '${arg_TARGET}')")
    endif()
    if(NOT arg_SPECS)
        message(FATAL_ERROR "specl_generate(${arg_TARGET}): no SPECS given")
    endif()
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "C" IN_LIST languages)
        message(FATAL_ERROR
            "specl_generate(${arg_TARGET}): the generated NAME.c are C; "
            "enable C in project() (LANGUAGES C CXX)")
    endif()

    set(out_dir "${arg_OUTPUT_DIR}")
    if(NOT out_dir)
        set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/specl/${arg_TARGET}")
    endif()
    get_filename_component(out_dir "${out_dir}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

    set(specs "")
    foreach(spec IN LISTS arg_SPECS)
        get_filename_component(spec "${spec}" ABSOLUTE)
        list(APPEND specs "${spec}")
    endforeach()

    set(options "")
    set(db "")
    if(arg_DB)
        get_filename_component(db "${arg_DB}" ABSOLUTE)
        list(APPEND options --db "${db}")
    endif()
    if(arg_TARGET_DEVICE)
        if(NOT arg_TARGET_DEVICE MATCHES "^(cpu|gpu)$")
            message(FATAL_ERROR
                "specl_generate(${arg_TARGET}): TARGET_DEVICE must be cpu "
                "or gpu (got '${arg_TARGET_DEVICE}')")
        endif()
        list(APPEND options --target "${arg_TARGET_DEVICE}")
    endif()
    if(arg_ALIAS)
        list(APPEND options --alias)
    endif()

    _specl_executable(specl)

    # The files gen writes, from specl itself; it also validates the specs
    # (and the database) now rather than at build time.
    execute_process(
        COMMAND "${specl}" gen ${specs} -o "${out_dir}" ${options}
                --list-outputs
        RESULT_VARIABLE status
        OUTPUT_VARIABLE listed
        ERROR_VARIABLE messages)
    if(NOT status EQUAL 0)
        # Indented, CMake prints specl's lines as they are (unwrapped).
        string(REGEX REPLACE "\n$" "" messages "${messages}")
        string(REPLACE "\n" "\n  " messages "  ${messages}")
        string(REPLACE ";" " " shown "${specs}")
        message(FATAL_ERROR
            "specl_generate(${arg_TARGET}): specl cannot generate "
            "${shown}:\n${messages}\n")
    endif()
    string(REGEX REPLACE "\n$" "" listed "${listed}")
    string(REPLACE "\n" ";" outputs "${listed}")
    _specl_claim_kernels("${arg_TARGET}" "${specl}" "${out_dir}" "${specs}"
                         "${outputs}")

    # A kernel added to or removed from a spec changes the outputs: the
    # configuration runs again, as it does for a new specl.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 ${specs} "${specl}")
    if(NOT outputs)
        return() # specs without kernels: nothing to build yet
    endif()

    # specl's own make rule of what it read, where CMake can take one
    # without a policy warning (the paths are absolute: CMP0116's two
    # behaviours agree on them).
    set(depfile_args "")
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.20 AND
       CMAKE_GENERATOR MATCHES "Makefiles|Ninja")
        cmake_policy(GET CMP0116 depfile_policy)
        if(depfile_policy OR NOT CMAKE_GENERATOR MATCHES "Ninja")
            # One per call: a target may take several.
            string(MD5 call "${out_dir};${specs}")
            string(SUBSTRING "${call}" 0 8 call)
            set(depfile
                "${CMAKE_CURRENT_BINARY_DIR}/specl/${arg_TARGET}-${call}.d")
            file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/specl")
            set(depfile_args DEPFILE "${depfile}")
            list(APPEND options --depfile "${depfile}")
        endif()
    endif()
    if(TARGET specl::specl)
        set(command specl::specl)
    else()
        set(command "${specl}")
    endif()
    set(sources ${outputs})
    list(FILTER sources INCLUDE REGEX "\\.c$")
    list(LENGTH sources n_kernels)
    add_custom_command(
        OUTPUT ${outputs}
        COMMAND ${command} gen --quiet ${specs} -o "${out_dir}" ${options}
        DEPENDS ${specs} ${db} "${specl}"
        ${depfile_args}
        COMMENT "specl: generating ${n_kernels} kernel(s) for ${arg_TARGET}"
        VERBATIM)

    target_sources(${arg_TARGET} PRIVATE ${outputs})
    target_include_directories(${arg_TARGET} PUBLIC "${out_dir}")
    if(NOT TARGET OpenCL::OpenCL)
        find_package(OpenCL REQUIRED)
    endif()
    # As target_link_libraries(PUBLIC) would, but whichever signature of
    # target_link_libraries the project uses for the target.
    set_property(TARGET ${arg_TARGET} APPEND PROPERTY
                 LINK_LIBRARIES OpenCL::OpenCL)
    set_property(TARGET ${arg_TARGET} APPEND PROPERTY
                 INTERFACE_LINK_LIBRARIES OpenCL::OpenCL)
endfunction()
