# Every dependency comes from Debian packages (scripts/install-deps installs them) or, on the GPU
# machine, from the staged copies that .deps/env.sh puts on CMAKE_PREFIX_PATH.
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)

# RE2, the regex engine (core/util/regex.hpp). Debian's package has no CMake config and the GPU
# machine may have no pkg-config, so it is found by its header and library.
find_path(EXPR_RE2_INCLUDE_DIR re2/re2.h REQUIRED)
find_library(EXPR_RE2_LIBRARY re2 REQUIRED)
add_library(expr_re2 UNKNOWN IMPORTED)
set_target_properties(expr_re2 PROPERTIES IMPORTED_LOCATION ${EXPR_RE2_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${EXPR_RE2_INCLUDE_DIR})
target_link_libraries(expr_re2 INTERFACE Threads::Threads)

# The runner's CUDA runtime and CUPTI; a build without CUDA (EXPR_WITH_CUDA) looks for neither.
if(EXPR_WITH_CUDA)
  find_package(CUDAToolkit 13 REQUIRED)
  # CUPTI ships inside the toolkit; older CMake does not always name it.
  if(NOT TARGET CUDA::cupti)
    find_library(EXPR_CUPTI_LIBRARY cupti REQUIRED
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64)
    add_library(CUDA::cupti SHARED IMPORTED)
    set_target_properties(CUDA::cupti PROPERTIES IMPORTED_LOCATION ${EXPR_CUPTI_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()

# LibTorch is optional for the core and required for the attention plugins. Debian's 1.13 CPU
# build serves machines without a GPU; the GPU machine uses the LibTorch inside its PyTorch. A
# build without CUDA has no plugins to build with it, so it does not look.
option(EXPR_WITH_TORCH "Build the LibTorch plugins" ON)
if(EXPR_WITH_TORCH AND EXPR_WITH_CUDA)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    message(STATUS "expr: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
  else()
    message(WARNING "expr: LibTorch not found; the LibTorch plugins are not built")
  endif()
endif()
