# What a project that builds C++ models with tfc gets, the same two ways:
#  - add_subdirectory(tfc) (or FetchContent): the tfc:: aliases below;
#  - find_package(tfc CONFIG) on an installed tfc (cmake --install): the
#    same names, imported from tfcTargets.cmake by tfcConfig.cmake.
# Either way tfc_add_model (cmake/TfcModel.cmake) uses only these targets:
# tfc::tfc, which compiles the IR and finds the runtime archives beside
# itself (BIN/../lib, docs/runtime.md), and tfc::TfcModelMain, the main() of
# a generator, which brings the DSL, the dialect, their headers (generated
# ones included) and MLIR's and LLVM's as usage requirements.

set(tfc_libraries TfcHeaders TfDialect TfcDSL TfcTransforms TfcLowering TfcRegistration
  TfcModelMain)
foreach(lib ${tfc_libraries})
  add_library(tfc::${lib} ALIAS ${lib})
endforeach()
add_executable(tfc::tfc ALIAS tfc)

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(tfc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tfc)

# The runtime archives and tfc itself install from runtime/ and tools/.
install(TARGETS ${tfc_libraries} EXPORT tfcTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The headers a generator includes, under the paths tfc's sources use.
install(FILES compiler/dsl/DSL.h compiler/dsl/ModelRegistry.h compiler/dsl/TrainConfig.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tfc/compiler/dsl)
install(FILES compiler/Registration.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tfc/compiler)
install(FILES dialect/TfDialect.h
  ${PROJECT_BINARY_DIR}/dialect/TfDialect.h.inc ${PROJECT_BINARY_DIR}/dialect/TfEnums.h.inc
  ${PROJECT_BINARY_DIR}/dialect/TfAttrs.h.inc ${PROJECT_BINARY_DIR}/dialect/TfInterfaces.h.inc
  ${PROJECT_BINARY_DIR}/dialect/TfOps.h.inc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tfc/dialect)

install(EXPORT tfcTargets NAMESPACE tfc:: DESTINATION ${tfc_cmake_dir})
configure_package_config_file(cmake/tfcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tfcConfig.cmake INSTALL_DESTINATION ${tfc_cmake_dir})
# The libraries' ABI is not promised across minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tfcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tfcConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/tfcConfigVersion.cmake cmake/TfcModel.cmake
  DESTINATION ${tfc_cmake_dir})
