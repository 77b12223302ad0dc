# Installs the libraries and headers with an exported CMake package, so another engine can do
#   find_package(qscheme CONFIG REQUIRED)
#   target_link_libraries(my_engine PRIVATE qscheme::fast)
# Headers go to <prefix>/include/qscheme/{scheme,fast,reference}/ and are included as
# "scheme/status.hpp", "fast/qscheme.h", ... with <prefix>/include/qscheme on the include path.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(QSCHEME_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/qscheme)
set(QSCHEME_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/qscheme)

set_target_properties(qscheme_scheme PROPERTIES EXPORT_NAME scheme)
set_target_properties(qscheme_reference PROPERTIES EXPORT_NAME reference)
set_target_properties(qscheme_fast PROPERTIES EXPORT_NAME fast)
foreach(t qscheme_scheme qscheme_reference qscheme_fast)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${QSCHEME_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS qscheme_scheme qscheme_reference qscheme_fast
        EXPORT qschemeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir scheme reference)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${QSCHEME_INSTALL_INCLUDEDIR}/${dir}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endforeach()
# fast/: the public headers only; kernels/ and support/ are the engine's own.
install(FILES ${PROJECT_SOURCE_DIR}/fast/fast.hpp ${PROJECT_SOURCE_DIR}/fast/qscheme.h
        DESTINATION ${QSCHEME_INSTALL_INCLUDEDIR}/fast)

install(EXPORT qschemeTargets NAMESPACE qscheme:: DESTINATION ${QSCHEME_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qschemeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/qschemeConfig.cmake
                              INSTALL_DESTINATION ${QSCHEME_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qschemeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/qschemeConfig.cmake ${PROJECT_BINARY_DIR}/qschemeConfigVersion.cmake
        DESTINATION ${QSCHEME_INSTALL_CMAKEDIR})
