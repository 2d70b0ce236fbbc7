# Debian packages of the install components (cmake/OpenbpuInstall.cmake) with CPack:
#   host (amd64):     openbpu-toolchain, libopenbpu-dnn, libopenbpu-dnn-dev
#   board (aarch64):  openbpu-board-tools, libopenbpu-dnn, libopenbpu-dnn-dev   (arm64)
# Built by scripts/package.sh (`cpack -G DEB` in a build folder); docs/install.md.
set(OPENBPU_PACKAGE_MAINTAINER "OpenBPU developers <openbpu@example.org>"
    CACHE STRING "Maintainer field of the Debian packages (name <address>)")
set(OPENBPU_DEBIAN_REVISION 1)
set(OPENBPU_DEBIAN_VERSION ${PROJECT_VERSION}-${OPENBPU_DEBIAN_REVISION})

if(OPENBPU_BUILD_TOOLCHAIN)
  set(OPENBPU_PACKAGE_COMPONENTS toolchain dnn dnn_dev)
else()
  set(OPENBPU_PACKAGE_COMPONENTS board_tools dnn dnn_dev)
endif()
set(OPENBPU_PACKAGE_NAME_toolchain openbpu-toolchain)
set(OPENBPU_PACKAGE_NAME_board_tools openbpu-board-tools)
set(OPENBPU_PACKAGE_NAME_dnn libopenbpu-dnn)
set(OPENBPU_PACKAGE_NAME_dnn_dev libopenbpu-dnn-dev)

# Every package carries /usr/share/doc/<package>/copyright and changelog.Debian.gz (Debian
# policy 12.5, 12.7). gzip -9n: maximum compression, no name or time stamp in the header.
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/changelog.in ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian
               @ONLY)
execute_process(COMMAND gzip -9nc ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian
  OUTPUT_FILE ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz
  COMMAND_ERROR_IS_FATAL ANY)
foreach(component ${OPENBPU_PACKAGE_COMPONENTS})
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${OPENBPU_PACKAGE_NAME_${component}}
    COMPONENT ${component})
endforeach()

if(NOT OPENBPU_BUILD_TOOLCHAIN)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/openbpu-board-tools.lintian-overrides
    DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
    RENAME openbpu-board-tools
    COMPONENT board_tools)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME openbpu)
set(CPACK_PACKAGE_VENDOR "OpenBPU")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${OPENBPU_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL ${OPENBPU_PACKAGE_COMPONENTS})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${OPENBPU_DEBIAN_REVISION})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${OPENBPU_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Directories 0755, files 0644 / 0755 whatever the umask of the build.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)

if(CMAKE_CROSSCOMPILING)
  # dpkg-shlibdeps cannot read the target's libraries here: the dependencies are stated. The
  # board tools are static; libdnn needs the C and C++ runtimes of Debian 12's toolchain.
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  set(CPACK_DEBIAN_DNN_PACKAGE_DEPENDS "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12)")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()

set(CPACK_DEBIAN_TOOLCHAIN_PACKAGE_NAME openbpu-toolchain)
# hmct-debugger draws its figures with PLplot's cairo driver, a plugin PLplot loads at run time
# (dpkg-shlibdeps sees only the libraries linked).
set(CPACK_DEBIAN_TOOLCHAIN_PACKAGE_DEPENDS "plplot-driver-cairo")
set(CPACK_DEBIAN_TOOLCHAIN_PACKAGE_SECTION science)
set(CPACK_COMPONENT_TOOLCHAIN_DESCRIPTION
    "BPU model toolchain: hb_mapper, hb_compile, hrt_model_exec and tools
OpenBPU's host tools in the style of the Horizon Robotics PTQ toolchain:
hb_mapper (checker, makertbin, infer), hb_compile, hb_model_info,
hb_model_verifier, hb_perf, hb_pack, hb_model_modifier, hb_eval_preprocess,
hmct-debugger, and hrt_model_exec running converted models on the
simulated BPU.
Documentation and sample configs are in /usr/share/openbpu.")

set(CPACK_DEBIAN_BOARD_TOOLS_PACKAGE_NAME openbpu-board-tools)
set(CPACK_DEBIAN_BOARD_TOOLS_PACKAGE_SECTION science)
set(CPACK_COMPONENT_BOARD_TOOLS_DESCRIPTION
    "BPU board tools: hrt_model_exec
hrt_model_exec model_info, infer and perf for models converted by the
OpenBPU toolchain, for the board (statically linked).")

set(CPACK_DEBIAN_DNN_PACKAGE_NAME libopenbpu-dnn)
set(CPACK_DEBIAN_DNN_PACKAGE_SECTION libs)
# A shlibs file for the packages with shared libraries (libdnn.so.1 only), and the ldconfig
# trigger (Debian policy 8.1.1). CPack's own postinst / postrm also call ldconfig: harmless,
# lintian's maintscript-calls-ldconfig warns of it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/libopenbpu-dnn.triggers
               ${CMAKE_CURRENT_BINARY_DIR}/debian/libopenbpu-dnn/triggers COPYONLY)
set(CPACK_DEBIAN_DNN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/libopenbpu-dnn/triggers)
set(CPACK_DEBIAN_DNN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_COMPONENT_DNN_DESCRIPTION
    "BPU runtime library with the hbDNN C API (libdnn)
libdnn loads models converted by the OpenBPU toolchain (.bin / .hbm) and
runs them: CPU operators on the host, BPU segments on the virtual BPU,
behind the hbDNN and hbSys C functions of the Horizon Robotics runtime.")

set(CPACK_DEBIAN_DNN_DEV_PACKAGE_NAME libopenbpu-dnn-dev)
set(CPACK_DEBIAN_DNN_DEV_PACKAGE_SECTION libdevel)
# libdnn.a is C++: linking it needs the C++ runtime's development files (GCC 12's on Debian 12).
set(CPACK_DEBIAN_DNN_DEV_PACKAGE_DEPENDS "libopenbpu-dnn (= ${OPENBPU_DEBIAN_VERSION}), libstdc++-12-dev | libstdc++-dev")
set(CPACK_COMPONENT_DNN_DEV_DESCRIPTION
    "BPU runtime library with the hbDNN C API (development files)
Headers (dnn/hb_dnn.h, dnn/hb_sys.h), the static libdnn.a, the CMake
package (find_package(OpenBPU), target OpenBPU::dnn), the pkg-config file
openbpu-dnn.pc and the sample applications, which build against it.")

include(CPack)
