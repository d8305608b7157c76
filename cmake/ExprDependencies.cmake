# Every dependency comes from Debian packages (scripts/install-deps installs them) or, on the GPU
# machine, from the staged copies that .deps/env.sh puts on CMAKE_PREFIX_PATH.
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(CUDAToolkit 13 REQUIRED)

# CUPTI ships inside the toolkit; older CMake does not always name it.
if(NOT TARGET CUDA::cupti)
  find_library(EXPR_CUPTI_LIBRARY cupti REQUIRED
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64)
  add_library(CUDA::cupti SHARED IMPORTED)
  set_target_properties(CUDA::cupti PROPERTIES IMPORTED_LOCATION ${EXPR_CUPTI_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${CUDAToolkit_INCLUDE_DIRS})
endif()

# LibTorch is optional for the core and required for the attention plugins. Debian's 1.13 CPU
# build serves machines without a GPU; the GPU machine uses the LibTorch inside its PyTorch.
option(EXPR_WITH_TORCH "Build the LibTorch plugins" ON)
if(EXPR_WITH_TORCH)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    message(STATUS "expr: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
  else()
    message(WARNING "expr: LibTorch not found; the LibTorch plugins are not built")
  endif()
endif()
