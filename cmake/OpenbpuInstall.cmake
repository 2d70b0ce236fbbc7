# `cmake --install` layout, CMake package, pkg-config file and Debian packages (docs/install.md).
#
# Components (each a Debian package through CPack, cmake/OpenbpuPackaging.cmake):
#   toolchain    host tools in bin/ (hb_mapper, hb_compile, ..., hmct-debugger, hrt_model_exec), docs and
#                sample configs in share/openbpu/                     → openbpu-toolchain
#   board_tools  the aarch64 build's hrt_model_exec                   → openbpu-board-tools
#   dnn          libdnn.so.<soversion> (the hbDNN C API)              → libopenbpu-dnn
#   dnn_dev      include/dnn/*.h, include/hobot/ (the UCP generation's headers), libdnn.so,
#                libdnn.a, the CMake package (OpenBPU::dnn,
#                OpenBPU::dnn_static), openbpu-dnn.pc, the samples    → libopenbpu-dnn-dev
#
# Everything is relocatable: the executables link no library of the project dynamically (no
# RPATH is needed, none is written), the CMake package finds itself from its own location
# (PACKAGE_PREFIX_DIR) and the pkg-config file from ${pcfiledir}.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(OPENBPU_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/OpenBPU)
set(OPENBPU_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/openbpu)
# Shared libraries are not executable (Debian policy 8.1; lintian shlib-with-executable-bit).
set(OPENBPU_LIBRARY_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# libdnn: runtime and development parts.
install(TARGETS openbpu_dnn_shared openbpu_dnn_static
  EXPORT OpenBPUTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dnn NAMELINK_COMPONENT dnn_dev
    PERMISSIONS ${OPENBPU_LIBRARY_PERMISSIONS}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dnn_dev
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dnn COMPONENT dnn_dev)
# The UCP generation's headers keep the reference's layout (hobot/hb_ucp.h, hobot/dnn/hb_dnn.h).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/hobot DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dnn_dev FILES_MATCHING PATTERN "*.h")
install(EXPORT OpenBPUTargets
  NAMESPACE OpenBPU::
  DESTINATION ${OPENBPU_INSTALL_CMAKEDIR}
  COMPONENT dnn_dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/OpenBPUConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/OpenBPUConfig.cmake
  INSTALL_DESTINATION ${OPENBPU_INSTALL_CMAKEDIR})
# The hbDNN C API keeps its signatures within a major version; 0.x minors add to it.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/OpenBPUConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/OpenBPUConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/OpenBPUConfigVersion.cmake
  DESTINATION ${OPENBPU_INSTALL_CMAKEDIR}
  COMPONENT dnn_dev)

# pkg-config: prefix from the file's own place (lib/pkgconfig → ../..), so a copied or
# dpkg -x'ed tree works as is. GNUInstallDirs' relative dirs keep the file valid for any prefix.
file(RELATIVE_PATH OPENBPU_PC_PREFIX_FROM_PCFILEDIR /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" OPENBPU_PC_PREFIX_FROM_PCFILEDIR "${OPENBPU_PC_PREFIX_FROM_PCFILEDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/openbpu-dnn.pc.in ${CMAKE_CURRENT_BINARY_DIR}/openbpu-dnn.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/openbpu-dnn.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dnn_dev)

# The samples, as a user copies them (they build against this installation).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/classification ${PROJECT_SOURCE_DIR}/samples/async_multi_model
                  ${PROJECT_SOURCE_DIR}/samples/ocr_pipeline
  DESTINATION ${OPENBPU_INSTALL_DATADIR}/samples
  COMPONENT dnn_dev)

if(OPENBPU_BUILD_TOOLCHAIN)
  # The host: every user-facing command line, hrt_model_exec (on the simulator) included.
  install(TARGETS hb_mapper hb_compile hb_model_info hb_model_verifier hb_perf hb_pack hb_model_modifier
                  hb_eval_preprocess hmct-debugger hrt_model_exec
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT toolchain)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
    DESTINATION ${OPENBPU_INSTALL_DATADIR}/docs
    COMPONENT toolchain
    FILES_MATCHING PATTERN "*.md")
  install(FILES ${PROJECT_SOURCE_DIR}/README.md
    DESTINATION ${OPENBPU_INSTALL_DATADIR}/docs
    COMPONENT toolchain)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/configs
    DESTINATION ${OPENBPU_INSTALL_DATADIR}
    COMPONENT toolchain)
else()
  # The board: hrt_model_exec (statically linked by the aarch64 toolchain file).
  install(TARGETS hrt_model_exec
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT board_tools)
endif()
