# expr_add_plugin(NAME SOURCES... [OUTPUT_DIRECTORY DIR]) builds an expr plugin: a module library
# NAME.so that sees only the public plugin API (expr::plugin_api), its symbols hidden but for the
# entry points EXPR_PLUGIN exports.
#
# It goes to OUTPUT_DIRECTORY (relative to the current build folder), else to EXPR_PLUGIN_DIR: in
# expr's own tree its build's lib/expr/plugins; in a project that found the installed package
# (find_package(expr)), the installed expr's lib/expr/plugins, where that expr finds it with no
# plugin_path or $EXPR_PLUGIN_PATH. Where EXPR_PLUGIN_INSTALL_DIR is set (expr's plugins/: the
# bundled plugins), `cmake --install` copies it there too.
#
# The same file serves expr's tree and, installed with the package (lib/cmake/expr), plugin
# projects outside it, so a plugin is declared alike in both.
function(expr_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT_DIRECTORY" "")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "expr_add_plugin(${name}): give the plugin's source files")
  endif()
  set(dir "${EXPR_PLUGIN_DIR}")
  if(arg_OUTPUT_DIRECTORY)
    set(dir "${arg_OUTPUT_DIRECTORY}")
  endif()
  if(dir STREQUAL "")
    message(FATAL_ERROR "expr_add_plugin(${name}): no output directory: set EXPR_PLUGIN_DIR or give OUTPUT_DIRECTORY")
  endif()
  get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  # A directory that cannot be written (an expr installed by root, say) fails here, with what to
  # do, instead of at the link step.
  execute_process(COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}" RESULT_VARIABLE cannot_create OUTPUT_QUIET ERROR_QUIET)
  execute_process(COMMAND test -w "${dir}" RESULT_VARIABLE cannot_write)
  if(cannot_create OR cannot_write)
    message(FATAL_ERROR "expr_add_plugin(${name}): cannot write to ${dir}. Choose a directory you can write: "
                        "-DEXPR_PLUGIN_DIR=DIR for every plugin of the project (or OUTPUT_DIRECTORY for this one), "
                        "and tell expr where it is: plugin_path: [DIR] in the series file, or EXPR_PLUGIN_PATH=DIR.")
  endif()

  add_library(${name} MODULE ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE expr::plugin_api)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY "${dir}"
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    # expr/plugin.hpp needs C++17; CMake 3.25 cannot ask nvcc for C++20.
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    # One CUDA runtime per process: expr, its plugins and LibTorch share the shared libcudart.
    CUDA_RUNTIME_LIBRARY Shared)
  if(EXPR_PLUGIN_INSTALL_DIR)
    install(TARGETS ${name} LIBRARY DESTINATION ${EXPR_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
