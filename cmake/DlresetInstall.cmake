# What `cmake --install` puts under a prefix: the libraries a training loop of its own needs
# (dlreset::data over its torch-free dlreset::data_core, dlreset::trace, dlreset::testing) with
# their headers and CMake package, the dlreset command with its man page and bash completion,
# the plot scripts and the docs.
#
# Headers keep their repository paths under include/dlreset ("harness/data/data_loader.h" is
# include/dlreset/harness/data/data_loader.h), because they include one another by those paths;
# the exported targets add include/dlreset to their users' include path, so a user writes
# #include "harness/data/data_loader.h" exactly as dlreset's own code does.
#
# The libraries are static, as in the build: their private dependencies (zlib, Boost.Stacktrace,
# libdl, dlreset::sys, whose headers stay out of the install) are linked by their users, so the
# config file finds those too.

include(CMakePackageConfigHelpers)

set(dlreset_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dlreset)
install(TARGETS dlreset_sys dlreset_trace dlreset_data_core dlreset_data dlreset_testing
  EXPORT dlresetTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlreset)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/harness/data ${PROJECT_SOURCE_DIR}/harness/trace
                  ${PROJECT_SOURCE_DIR}/harness/testing
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlreset/harness
  FILES_MATCHING PATTERN "*.h")
install(EXPORT dlresetTargets NAMESPACE dlreset:: DESTINATION ${dlreset_cmake_dir})

get_target_property(DLRESET_STACKTRACE_BACKEND dlreset_trace DLRESET_STACKTRACE_BACKEND)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dlresetConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dlresetConfig.cmake
  INSTALL_DESTINATION ${dlreset_cmake_dir})
# 0.x: a minor release may change the API, so 0.5 accepts 0.5.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dlresetConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dlresetConfig.cmake ${PROJECT_BINARY_DIR}/dlresetConfigVersion.cmake
  DESTINATION ${dlreset_cmake_dir})

# The command (installed by app/), its man page and its bash completion, written by the
# built binary from the same CLI11 definitions as --help; the man page compressed as Debian
# wants it (no name, no timestamp). A sanitizer build skips them: its binary would need the
# sanitizer's run-time options to run at build time, and it is for tests, not for installing.
if(NOT DLRESET_SANITIZE)
  set(generated ${PROJECT_BINARY_DIR}/generated)
  add_custom_command(OUTPUT ${generated}/dlreset.1.gz ${generated}/dlreset.bash
    COMMAND ${CMAKE_COMMAND} -E make_directory ${generated}
    COMMAND sh -c "\"$1\" --man-page > \"$2\" && \"$1\" --bash-completion > \"$3\""
            sh $<TARGET_FILE:dlreset> ${generated}/dlreset.1 ${generated}/dlreset.bash
    COMMAND gzip -9nf ${generated}/dlreset.1
    DEPENDS dlreset
    COMMENT "Writing dlreset(1) and the bash completion from the command's own options"
    VERBATIM)
  add_custom_command(OUTPUT ${generated}/dlreset-watch.1.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${generated}
    COMMAND sh -c "\"$1\" --man-page > \"$2\"" sh $<TARGET_FILE:dlreset-watch> ${generated}/dlreset-watch.1
    COMMAND gzip -9nf ${generated}/dlreset-watch.1
    DEPENDS dlreset-watch
    COMMENT "Writing dlreset-watch(1) from the command's own options"
    VERBATIM)
  add_custom_target(dlreset_man_page ALL
    DEPENDS ${generated}/dlreset.1.gz ${generated}/dlreset.bash ${generated}/dlreset-watch.1.gz)
  install(FILES ${generated}/dlreset.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${generated}/dlreset-watch.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT watch)
  install(FILES ${generated}/dlreset.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          RENAME dlreset)
endif()

install(PROGRAMS ${PROJECT_SOURCE_DIR}/plots/plot_epochs.py ${PROJECT_SOURCE_DIR}/plots/plot_timeline.py
                 ${PROJECT_SOURCE_DIR}/plots/plot_ranks.py ${PROJECT_SOURCE_DIR}/plots/plot_workers.py
                 ${PROJECT_SOURCE_DIR}/plots/report.py
                 ${PROJECT_SOURCE_DIR}/plots/sweep.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/dlreset/plots)
install(FILES ${PROJECT_SOURCE_DIR}/plots/plotstyle.py DESTINATION ${CMAKE_INSTALL_DATADIR}/dlreset/plots)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
