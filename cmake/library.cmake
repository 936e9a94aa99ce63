# library.cmake — dgemm-dist as a library (included by the top level after
# the program's layers): the public C API (include/dgemm_dist*.h,
# src/api/), libdgemm-dist.so and libdgemm-dist.a built from the layers'
# objects, and the install: headers, libraries, CMake package
# (find_package(dgemm-dist) → dgemm-dist::dgemm-dist, dgemm-dist::scalapack),
# pkg-config files and the dgemm-dist program; libdgemm-dist-scalapack
# (pdgemm_/psgemm_ drop-in, src/scalapack).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The version is project(VERSION)'s, the one number: a generated header
# (dgemm_dist_version.h in the build tree's include folder, installed)
# gives it to the library (dd_version), the program (--version, the JSON
# record, the HDF5 files' provenance) and the library's callers.
set(DD_GEN_INCLUDE ${PROJECT_BINARY_DIR}/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/dgemm_dist_version.h.in
  ${DD_GEN_INCLUDE}/dgemm_dist_version.h @ONLY)

# The public headers and where a client of the build tree finds them:
# include/, the generated version header, and src/abi's leaf (the
# telemetry struct, shared with base, which sees none of include/).
set(DD_PUBLIC_HEADERS
  ${PROJECT_SOURCE_DIR}/include/dgemm_dist.h ${PROJECT_SOURCE_DIR}/include/dgemm_dist_plan.h
  ${PROJECT_SOURCE_DIR}/include/dgemm_dist_tool.h ${PROJECT_SOURCE_DIR}/include/dgemm_dist_scalapack.h
  ${PROJECT_SOURCE_DIR}/src/abi/dgemm_dist_telemetry.h ${DD_GEN_INCLUDE}/dgemm_dist_version.h)
set(DD_PUBLIC_INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/include ${DD_GEN_INCLUDE} ${PROJECT_SOURCE_DIR}/src/abi)

# The exported symbols, one list per library (cmake/<name>.syms): from it
# the shared library's version script <build>/<name>.map and the static
# archive's keep list <build>/<name>.keep, rewritten only when it changes.
function(dd_symbol_files name)
  set(syms ${PROJECT_SOURCE_DIR}/cmake/${name}.syms)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${syms})
  file(STRINGS ${syms} lines ENCODING UTF-8)
  set(map "/* ${name}.map: made by cmake/library.cmake from cmake/${name}.syms */\n{\n  global:\n")
  set(keep "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "#.*" "" line "${line}")
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    if(NOT line MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "cmake/${name}.syms: '${line}' is not a C identifier")
    endif()
    string(APPEND map "    ${line};\n")
    string(APPEND keep "${line}\n")
  endforeach()
  string(APPEND map "  local:\n    *;\n};\n")
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/${name}.map CONTENT "${map}")
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/${name}.keep CONTENT "${keep}")
endfunction()
dd_symbol_files(dgemm-dist)
dd_symbol_files(dgemm-dist-scalapack)

# A static archive that exposes its list's names alone: the objects of the
# targets given (ARGN) linked into one relocatable object (ld -r: every
# reference between them bound inside it, the CUDA objects' fatbinary
# registration included), whose other globals objcopy then makes local,
# archived as the one member.  A client's link then sees no internal name
# (grid_make, dd_agree, ...) to clash with its own.  --force-group-allocation
# dissolves the COMDAT groups of the C++ (CUDA host) objects: a group left
# in, its symbol made local, would be dropped for the client's own copy of
# the group (libstdc++.a's DW.ref.__gxx_personality_v0) and leave the
# archive's references to it undefined.
function(dd_public_archive target name)
  set(obj ${PROJECT_BINARY_DIR}/${name}-static.o)
  set(keep ${PROJECT_BINARY_DIR}/${name}.keep)
  set(objs)
  foreach(t ${ARGN})
    list(APPEND objs $<TARGET_OBJECTS:${t}>)
  endforeach()
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CMAKE_LINKER} -r --force-group-allocation -o ${obj} ${objs}
    COMMAND ${CMAKE_OBJCOPY} --keep-global-symbols=${keep} ${obj}
    DEPENDS ${objs} ${ARGN} ${keep}
    COMMENT "${name}: one relocatable object, the public symbols alone global"
    COMMAND_EXPAND_LISTS VERBATIM)
  set_source_files_properties(${obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${target} STATIC ${obj})
  add_dependencies(${target} ${ARGN})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
endfunction()
if(NOT CMAKE_OBJCOPY)
  message(FATAL_ERROR "objcopy not found (binutils): the static libraries need it")
endif()

# The layers go into a shared library: position-independent code.
set(DD_LIB_LAYERS dd_base dd_comm dd_engine dd_model dd_mult)
foreach(lib ${DD_LIB_LAYERS} dd_io)
  set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endforeach()
if(TARGET dd_kernels)
  # dd_i8gemm: ozaki2's INT8 GEMM, an object library of its own (sm_90a);
  # dd_kernels' archive holds its objects, $<TARGET_OBJECTS:dd_kernels> not
  list(APPEND DD_LIB_LAYERS dd_kernels dd_i8gemm)
endif()

# The CUDA objects' host code without STB_GNU_UNIQUE: g++ gives static
# locals of inline and template functions (the kernels' launch settings)
# that binding, which objcopy cannot make local (dd_public_archive); as
# weak symbols they are localized like any other.
foreach(lib ${DD_LIB_LAYERS})
  target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fno-gnu-unique>)
endforeach()

# src/api, compiled once for both libraries
add_library(dd_api OBJECT src/api/api_context.c src/api/api_gemm.c src/api/api_entry.c
  src/api/api_operands.c src/api/api_redist.c src/api/api_exchange.c src/api/api_stage.c
  src/api/api_work.c src/api/api_plan.c src/api/api_plan_stream.c src/api/api_plan_data.c
  src/api/api_plan_rows.c
  src/api/api_pdevice.c src/api/api_cyclic.c src/api/api_sample.c
  src/api/api_pipe.c src/api/api_parallel.c)
target_include_directories(dd_api PUBLIC ${DD_PUBLIC_INCLUDE_DIRS})
target_link_libraries(dd_api PRIVATE dd_mult)

# the library for the program's own link (static, not installed): the API's
# objects, the layers for the link only, the public headers the one include
add_library(dd_library STATIC $<TARGET_OBJECTS:dd_api>)
target_include_directories(dd_library PUBLIC ${DD_PUBLIC_INCLUDE_DIRS})
target_link_libraries(dd_library PRIVATE dd_mult)
target_compile_options(dd_api PRIVATE ${DD_WARN})
set_target_properties(dd_api PROPERTIES POSITION_INDEPENDENT_CODE ON)

set(_dd_api_includes $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
foreach(dir ${DD_PUBLIC_INCLUDE_DIRS})
  list(APPEND _dd_api_includes $<BUILD_INTERFACE:${dir}>)
endforeach()

# shared: the layers linked in privately; only the list's names exported
add_library(dgemm_dist_shared SHARED $<TARGET_OBJECTS:dd_api>)
target_include_directories(dgemm_dist_shared PUBLIC ${_dd_api_includes})
target_link_libraries(dgemm_dist_shared PUBLIC MPI::MPI_C PRIVATE dd_mult)
target_link_options(dgemm_dist_shared PRIVATE
  -Wl,--version-script=${PROJECT_BINARY_DIR}/dgemm-dist.map -Wl,--no-undefined)
set_target_properties(dgemm_dist_shared PROPERTIES
  OUTPUT_NAME dgemm-dist EXPORT_NAME dgemm-dist
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${PROJECT_BINARY_DIR}/dgemm-dist.map)

# static: the API's and the layers' objects as one relocatable object, the
# list's names its only globals (no HDF5: the API reads no files)
dd_public_archive(dgemm_dist_static dgemm-dist dd_api ${DD_LIB_LAYERS})
target_include_directories(dgemm_dist_static PUBLIC ${_dd_api_includes})
# base's telemetry sampler (a thread, NVML by dlopen) is in the one object
target_link_libraries(dgemm_dist_static PUBLIC MPI::MPI_C ${OPENBLAS_LIBRARY} m Threads::Threads
  ${CMAKE_DL_LIBS})
if(DD_HAVE_CUDA)
  # the CUDA objects need the C++ runtime when a C linker links them
  target_link_libraries(dgemm_dist_static PUBLIC CUDA::cublas CUDA::cudart stdc++)
  if(DD_HAVE_NCCL)
    target_link_libraries(dgemm_dist_static PUBLIC ${NCCL_LIBRARY})
  endif()
endif()
set_target_properties(dgemm_dist_static PROPERTIES
  OUTPUT_NAME dgemm-dist EXPORT_NAME dgemm-dist-static)

add_library(dgemm-dist::dgemm-dist ALIAS dgemm_dist_shared)
add_library(dgemm-dist::dgemm-dist-static ALIAS dgemm_dist_static)

# libdgemm-dist-scalapack: pdgemm_ and psgemm_ with ScaLAPACK's Fortran ABI
# on top of dd_pgemm (src/scalapack, include/dgemm_dist_scalapack.h).  The
# BLACS it calls are weak symbols, resolved at run time from the program's
# ScaLAPACK, so building it needs no ScaLAPACK; the real routines are
# reached, when linked after it, by dlsym(RTLD_NEXT).
# Its knobs (DD_SCALAPACK_*) are read through base's registry, of which it
# has its own copy (dd_scalapack_knobs: src/base/knobs.c and knobs_parse.c,
# libc, pthreads and MPI only, its warnings signed dgemm-dist-scalapack),
# since libdgemm-dist exports none of base; of base it sees that header alone.
add_library(dd_scalapack_knobs OBJECT src/base/knobs.c src/base/knobs_parse.c)
target_compile_definitions(dd_scalapack_knobs PRIVATE ${DD_POSIX}
  DD_KNOBS_WHO="dgemm-dist-scalapack")
target_link_libraries(dd_scalapack_knobs PRIVATE MPI::MPI_C Threads::Threads)
target_compile_options(dd_scalapack_knobs PRIVATE ${DD_WARN})
add_library(dd_scalapack OBJECT src/scalapack/dd_scalapack.c src/scalapack/dd_scalapack_check.c)
target_include_directories(dd_scalapack PRIVATE ${DD_PUBLIC_INCLUDE_DIRS}
  ${PROJECT_SOURCE_DIR}/src/base)
target_link_libraries(dd_scalapack PRIVATE MPI::MPI_C)
target_compile_options(dd_scalapack PRIVATE ${DD_WARN})
set_target_properties(dd_scalapack dd_scalapack_knobs PROPERTIES POSITION_INDEPENDENT_CODE ON)
add_library(dgemm_dist_scalapack_shared SHARED $<TARGET_OBJECTS:dd_scalapack>
  $<TARGET_OBJECTS:dd_scalapack_knobs>)
target_link_libraries(dgemm_dist_scalapack_shared PUBLIC dgemm_dist_shared
  PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
target_link_options(dgemm_dist_scalapack_shared PRIVATE
  -Wl,--version-script=${PROJECT_BINARY_DIR}/dgemm-dist-scalapack.map -Wl,--no-undefined)
set_target_properties(dgemm_dist_scalapack_shared PROPERTIES
  OUTPUT_NAME dgemm-dist-scalapack EXPORT_NAME scalapack INSTALL_RPATH "$ORIGIN"
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${PROJECT_BINARY_DIR}/dgemm-dist-scalapack.map)
dd_public_archive(dgemm_dist_scalapack_static dgemm-dist-scalapack dd_scalapack dd_scalapack_knobs)
target_link_libraries(dgemm_dist_scalapack_static PUBLIC dgemm_dist_static ${CMAKE_DL_LIBS})
set_target_properties(dgemm_dist_scalapack_static PROPERTIES
  OUTPUT_NAME dgemm-dist-scalapack EXPORT_NAME scalapack-static)
add_library(dgemm-dist::scalapack ALIAS dgemm_dist_scalapack_shared)
add_library(dgemm-dist::scalapack-static ALIAS dgemm_dist_scalapack_static)

# ---- install ------------------------------------------------------------------------
set(DD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dgemm-dist)
install(TARGETS dgemm_dist_shared dgemm_dist_static
  dgemm_dist_scalapack_shared dgemm_dist_scalapack_static EXPORT dgemm-distTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS dgemm-dist RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${DD_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT dgemm-distTargets NAMESPACE dgemm-dist:: DESTINATION ${DD_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dgemm-distConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dgemm-distConfig.cmake INSTALL_DESTINATION ${DD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dgemm-distConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dgemm-distConfig.cmake
  ${PROJECT_BINARY_DIR}/dgemm-distConfigVersion.cmake DESTINATION ${DD_CMAKE_DIR})

# pkg-config: relocatable (prefix from the file's own place), MPI's flags
# included (the header needs mpi.h; callers call MPI)
file(RELATIVE_PATH DD_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" DD_PC_UP "${DD_PC_UP}")
set(DD_PC_MPI_CFLAGS "")
foreach(dir ${MPI_C_INCLUDE_DIRS})
  string(APPEND DD_PC_MPI_CFLAGS " -I${dir}")
endforeach()
set(DD_PC_MPI_LIBS "")
foreach(lib ${MPI_C_LIBRARIES})
  string(APPEND DD_PC_MPI_LIBS " ${lib}")
endforeach()
set(DD_PC_PRIVATE_LIBS "${OPENBLAS_LIBRARY} -lm -pthread")
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND DD_PC_PRIVATE_LIBS " -l${lib}")
endforeach()
if(DD_HAVE_CUDA)
  string(APPEND DD_PC_PRIVATE_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcudart -lstdc++")
  if(DD_HAVE_NCCL)
    string(APPEND DD_PC_PRIVATE_LIBS " ${NCCL_LIBRARY}")
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/dgemm-dist.pc.in ${PROJECT_BINARY_DIR}/dgemm-dist.pc @ONLY)
set(CMAKE_DL_LIBS_PC "")
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND CMAKE_DL_LIBS_PC " -l${lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/dgemm-dist-scalapack.pc.in
  ${PROJECT_BINARY_DIR}/dgemm-dist-scalapack.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dgemm-dist.pc ${PROJECT_BINARY_DIR}/dgemm-dist-scalapack.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
