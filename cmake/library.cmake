# library.cmake — dgemm-dist as a library (included by the top level after
# the program's layers): the public C API (include/dgemm_dist.h,
# src/api/), libdgemm-dist.so and libdgemm-dist.a built from the layers'
# objects, and the install: header, libraries, CMake package
# (find_package(dgemm-dist) → dgemm-dist::dgemm-dist, dgemm-dist::scalapack),
# pkg-config files and the dgemm-dist program; libdgemm-dist-scalapack
# (pdgemm_/psgemm_ drop-in, src/scalapack).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The header's version is the project's: one number, checked here.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/dgemm_dist.h _dd_ver REGEX "^#define DGEMM_DIST_VERSION_(MAJOR|MINOR|PATCH) ")
set(_dd_hver "")
foreach(part MAJOR MINOR PATCH)
  foreach(line IN LISTS _dd_ver)
    if(line MATCHES "VERSION_${part} ([0-9]+)")
      list(APPEND _dd_hver ${CMAKE_MATCH_1})
    endif()
  endforeach()
endforeach()
list(JOIN _dd_hver "." _dd_hver)
if(NOT _dd_hver STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "include/dgemm_dist.h says version ${_dd_hver} but project() says ${PROJECT_VERSION}: update DGEMM_DIST_VERSION_* in the header")
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

# src/api, compiled once for both libraries
add_library(dd_api OBJECT src/api/api_context.c src/api/api_gemm.c src/api/api_entry.c
  src/api/api_operands.c src/api/api_redist.c src/api/api_exchange.c src/api/api_stage.c
  src/api/api_work.c src/api/api_plan.c src/api/api_plan_stream.c src/api/api_plan_data.c
  src/api/api_pdevice.c src/api/api_cyclic.c src/api/api_sample.c)
target_include_directories(dd_api PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(dd_api PRIVATE dd_mult)

# the library for the program's own link (static, not installed): the API's
# objects, the layers for the link only, the public header the one include
add_library(dd_library STATIC $<TARGET_OBJECTS:dd_api>)
target_include_directories(dd_library PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(dd_library PRIVATE dd_mult)
target_compile_options(dd_api PRIVATE ${DD_WARN})
set_target_properties(dd_api PROPERTIES POSITION_INDEPENDENT_CODE ON)

set(_dd_api_includes
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# shared: the layers linked in privately; only the API is exported (map)
add_library(dgemm_dist_shared SHARED $<TARGET_OBJECTS:dd_api>)
target_include_directories(dgemm_dist_shared PUBLIC ${_dd_api_includes})
target_link_libraries(dgemm_dist_shared PUBLIC MPI::MPI_C PRIVATE dd_mult)
target_link_options(dgemm_dist_shared PRIVATE
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/dgemm-dist.map -Wl,--no-undefined)
set_target_properties(dgemm_dist_shared PROPERTIES
  OUTPUT_NAME dgemm-dist EXPORT_NAME dgemm-dist
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/dgemm-dist.map)

# static: the API's and the layers' objects in one archive (no HDF5: the
# API reads no files, and the archive's members are pulled only as needed)
set(_dd_objs $<TARGET_OBJECTS:dd_api>)
foreach(lib ${DD_LIB_LAYERS})
  list(APPEND _dd_objs $<TARGET_OBJECTS:${lib}>)
endforeach()
add_library(dgemm_dist_static STATIC ${_dd_objs})
target_include_directories(dgemm_dist_static PUBLIC ${_dd_api_includes})
target_link_libraries(dgemm_dist_static PUBLIC MPI::MPI_C ${OPENBLAS_LIBRARY} m)
if(DD_HAVE_CUDA)
  # the CUDA objects need the C++ runtime when a C linker links them
  target_link_libraries(dgemm_dist_static PUBLIC CUDA::cublas CUDA::cudart stdc++)
  if(DD_HAVE_NCCL)
    target_link_libraries(dgemm_dist_static PUBLIC ${NCCL_LIBRARY})
  endif()
endif()
set_target_properties(dgemm_dist_static PROPERTIES
  OUTPUT_NAME dgemm-dist EXPORT_NAME dgemm-dist-static LINKER_LANGUAGE C)

add_library(dgemm-dist::dgemm-dist ALIAS dgemm_dist_shared)
add_library(dgemm-dist::dgemm-dist-static ALIAS dgemm_dist_static)

# libdgemm-dist-scalapack: pdgemm_ and psgemm_ with ScaLAPACK's Fortran ABI
# on top of dd_pgemm (src/scalapack).  The BLACS it calls are weak
# symbols, resolved at run time from the program's ScaLAPACK, so building
# it needs no ScaLAPACK; the real routines are reached, when linked after
# it, by dlsym(RTLD_NEXT).
add_library(dgemm_dist_scalapack_shared SHARED src/scalapack/dd_scalapack.c)
target_link_libraries(dgemm_dist_scalapack_shared PUBLIC dgemm_dist_shared PRIVATE ${CMAKE_DL_LIBS})
target_compile_options(dgemm_dist_scalapack_shared PRIVATE ${DD_WARN})
target_link_options(dgemm_dist_scalapack_shared PRIVATE
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/dgemm-dist-scalapack.map -Wl,--no-undefined)
set_target_properties(dgemm_dist_scalapack_shared PROPERTIES
  OUTPUT_NAME dgemm-dist-scalapack EXPORT_NAME scalapack INSTALL_RPATH "$ORIGIN"
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/dgemm-dist-scalapack.map)
add_library(dgemm_dist_scalapack_static STATIC src/scalapack/dd_scalapack.c)
target_link_libraries(dgemm_dist_scalapack_static PUBLIC dgemm_dist_static ${CMAKE_DL_LIBS})
target_compile_options(dgemm_dist_scalapack_static PRIVATE ${DD_WARN})
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
install(FILES ${PROJECT_SOURCE_DIR}/include/dgemm_dist.h ${PROJECT_SOURCE_DIR}/include/dgemm_dist_telemetry.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
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
set(DD_PC_PRIVATE_LIBS "${OPENBLAS_LIBRARY} -lm")
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
