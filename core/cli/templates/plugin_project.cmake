# @NAME@: an expr plugin, built against an installed expr with find_package(expr).
#   cmake -S . -B build -DCMAKE_PREFIX_PATH=@PREFIX@ && cmake --build build
# The plugin goes to that expr's lib/expr/plugins, where `expr run` finds it. To put it elsewhere,
# configure with -DEXPR_PLUGIN_DIR=DIR and write plugin_path: [DIR] in the series.
# (Below 3.25: Debian 12's CMake 3.25.1 breaks FindCUDAToolkit for CUDA 13 from 3.25 on.)
cmake_minimum_required(VERSION 3.24...3.31)
@PROJECT@
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)  # the measured work is compiled as it will be used
endif()
@FIND@
expr_add_plugin(@NAME@ @SOURCE@)
@LINK@
