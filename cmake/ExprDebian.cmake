# The Debian package: `cmake --build build --target package` makes expr_<version>_amd64.deb (CPack)
# from the install tree of ExprPackage.cmake under /opt/expr (coreutils owns /usr/bin/expr), with
# the series that ship as examples in /opt/expr/share/expr/series; the tree is relocatable, so it
# runs from there as from any prefix. Beyond Debian it needs what the build needs: the CUDA 13
# runtime and CUPTI at /usr/local/cuda, which the binary's run path names and which no Debian
# package provides, so the package cannot depend on them. scripts/fresh-check installs the package
# in a fresh Debian root and runs the CPU series with it.
install(FILES ${PROJECT_SOURCE_DIR}/tests/series/cpu.yaml ${PROJECT_SOURCE_DIR}/experiments/series3.yaml
              ${PROJECT_SOURCE_DIR}/experiments/attention-sweep.yaml ${PROJECT_SOURCE_DIR}/experiments/masked-fill-gate.yaml
        DESTINATION share/expr/series)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME expr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU profiling experiments: guesses about the trace, judged against it")
set(CPACK_PACKAGE_CONTACT "expr maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /opt/expr)
set(CPACK_STRIP_FILES ON)  # the RelWithDebInfo binary is mostly debug information
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # expr_<version>_<architecture>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The Debian 12 libraries expr links (ldd of build/bin/expr and the bundled plugins); LibTorch's for
# the bundled LibTorch plugins where the build has them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libyaml-cpp0.7, libfmt9, libspdlog1.10, libre2-9, libsqlite3-0")
if(TARGET expr_torch)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libtorch1.13")
endif()
# Building plugins against the installed package (find_package(expr)) needs a compiler and CMake.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, g++, libtorch-dev")
include(CPack)
