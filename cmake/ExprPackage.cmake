# What `cmake --install build --prefix P` puts under P, for plugins built outside expr's tree:
#   bin/expr                         the command (the stage libraries are static, inside it)
#   lib/expr/plugins/NAME.so         the bundled plugins (expr_add_plugin in plugins/)
#   include/expr/plugin.hpp          the public plugin API, the only core header a plugin sees
#   include/expr_torch/, lib/libexpr_torch.a   the LibTorch helpers, where expr has LibTorch
#   lib/cmake/expr/                  the CMake package: find_package(expr [COMPONENTS torch])
# Nothing installed names P: the package finds everything from its own place, and the binary's
# run path names only libraries outside the prefix (CUDA, LibTorch), so P can be moved.
include(CMakePackageConfigHelpers)
set(expr_package_dir lib/cmake/expr)

install(TARGETS expr EXPORT exprTargets RUNTIME DESTINATION bin)
install(TARGETS expr_plugin_api EXPORT exprTargets)
install(FILES ${PROJECT_SOURCE_DIR}/core/include/expr/plugin.hpp DESTINATION include/expr)
install(EXPORT exprTargets NAMESPACE expr:: DESTINATION ${expr_package_dir})

# The LibTorch helpers go in their own export set, loaded only for COMPONENTS torch, after the
# package has found the same LibTorch.
set(expr_libtorch_version "")
set(expr_torch_dir "")
if(TARGET expr_torch)
  set(expr_libtorch_version ${Torch_VERSION})
  set(expr_torch_dir ${Torch_DIR})
  install(TARGETS expr_torch EXPORT exprTorchTargets ARCHIVE DESTINATION lib)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/plugins/torch/include/expr_torch DESTINATION include)
  install(EXPORT exprTorchTargets NAMESPACE expr:: DESTINATION ${expr_package_dir})
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/exprConfig.cmake.in ${PROJECT_BINARY_DIR}/exprConfig.cmake
                              INSTALL_DESTINATION ${expr_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/exprConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/exprConfig.cmake ${PROJECT_BINARY_DIR}/exprConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/ExprPlugin.cmake
        DESTINATION ${expr_package_dir})
