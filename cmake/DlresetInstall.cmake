# What `cmake --install` puts under a prefix: the libraries a training loop of its own needs
# (dlreset::data over its torch-free dlreset::data_core, dlreset::trace, dlreset::testing) with
# their headers and CMake package, the dlreset command with its man page and bash completion,
# the plot scripts and the docs.
#
# Headers are installed by concept under include/dlreset (data/, testing/, trace/), with the
# umbrellas dlreset/data.h and dlreset/testing.h, whatever folder and layer they sit in here: a
# user writes #include "dlreset/data.h", and dlreset may move its files without breaking them.
# The installed copy of a public header is the header itself with its includes of other public
# headers rewritten to those paths (written at configure time under the build's public/ folder).

# The libraries are static, as in the build: their private dependencies (zlib, Boost.Stacktrace,
# libdl, dlreset::sys, whose headers stay out of the install) are linked by their users, so the
# config file finds those too.

include(CMakePackageConfigHelpers)

set(dlreset_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dlreset)
install(TARGETS dlreset_sys dlreset_trace dlreset_data_core dlreset_data dlreset_testing
  EXPORT dlresetTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The public headers: what a training loop of its own includes (examples/own_loop), and what
# those include. The rest (the worker back-ends, the transport, the iterators' insides) is
# dlreset's own and may change in any release, so it is not installed. The loop below stops the
# configure step when a public header includes one that is not public: its users could not
# compile it.
set(dlreset_public_headers
  harness/data/base_dataloader_iter.h
  harness/data/batch.h
  harness/data/batch_iterator.h
  harness/data/collate.h
  harness/data/data_loader.h
  harness/data/distributed_sampler.h
  harness/data/loader_state.h
  harness/data/pass_times.h
  harness/data/random_sampler.h
  harness/data/reset_observer.h
  harness/data/core/data_loader_options.h
  harness/data/core/errors.h
  harness/data/core/datasets/dataset.h
  harness/data/core/datasets/dataset_registry.h
  harness/data/core/datasets/idx_dataset.h
  harness/data/core/datasets/sample_shape.h
  harness/data/core/datasets/synthetic_dataset.h
  harness/data/core/memory/block_source.h
  harness/data/core/memory/raw_batch.h
  harness/data/core/samplers/batch_sampler.h
  harness/data/core/samplers/sampler.h
  harness/data/core/samplers/sequential_sampler.h
  harness/data/core/worker/worker_info.h
  harness/testing/failure_capture.h
  harness/testing/loader_matchers.h
  harness/testing/loader_watch.h
  harness/trace/event_log.h
  harness/trace/reset_trace.h
  harness/trace/stack_trace.h
  harness/trace/traced.h
  harness/trace/watched.h)
# dlreset_public_path(<header> <out>): where a public header is installed, under include/: its
# concept, then its path below that concept's folder here, less the torch-free core/ of data.
function(dlreset_public_path header out)
  string(REGEX REPLACE "^harness/data/core/" "dlreset/data/" path "${header}")
  string(REGEX REPLACE "^harness/" "dlreset/" path "${path}")
  set(${out} ${path} PARENT_SCOPE)
endfunction()

set(dlreset_public_dir ${PROJECT_BINARY_DIR}/public)
set(dlreset_umbrella_data "")
set(dlreset_umbrella_testing "")
foreach(header IN LISTS dlreset_public_headers)
  file(READ ${PROJECT_SOURCE_DIR}/${header} text)
  string(REGEX MATCHALL "#include \"harness/[^\"]+\"" includes "${text}")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\"$" "\\1" included "${line}")
    if(NOT included IN_LIST dlreset_public_headers)
      message(FATAL_ERROR "${header} is installed and includes ${included}, which is not: a user "
                          "of the installed headers could not compile it. Add ${included} to "
                          "dlreset_public_headers in cmake/DlresetInstall.cmake, or include it "
                          "from a .cpp file instead.")
    endif()
    dlreset_public_path(${included} included_path)
    string(REPLACE "${line}" "#include \"${included_path}\"" text "${text}")
  endforeach()
  dlreset_public_path(${header} path)
  # Written only when it changed, so that nothing that includes it rebuilds for nothing.
  file(WRITE ${dlreset_public_dir}/${path}.new "${text}")
  configure_file(${dlreset_public_dir}/${path}.new ${dlreset_public_dir}/${path} COPYONLY)
  file(REMOVE ${dlreset_public_dir}/${path}.new)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${header})
  if(path MATCHES "^dlreset/data/")
    string(APPEND dlreset_umbrella_data "#include \"${path}\"\n")
  else()
    string(APPEND dlreset_umbrella_testing "#include \"${path}\"\n")
  endif()
endforeach()
# The umbrellas: a loop's code includes dlreset/data.h; its tests dlreset/testing.h.
configure_file(${PROJECT_SOURCE_DIR}/cmake/umbrella_data.h.in ${dlreset_public_dir}/dlreset/data.h @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/umbrella_testing.h.in ${dlreset_public_dir}/dlreset/testing.h @ONLY)
install(DIRECTORY ${dlreset_public_dir}/dlreset DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT dlresetTargets NAMESPACE dlreset:: DESTINATION ${dlreset_cmake_dir})

get_target_property(DLRESET_STACKTRACE_BACKEND dlreset_trace DLRESET_STACKTRACE_BACKEND)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dlresetConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dlresetConfig.cmake
  INSTALL_DESTINATION ${dlreset_cmake_dir})
# 0.x: a minor release may change the API, so 0.6 accepts 0.6.* only.
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
                 ${PROJECT_SOURCE_DIR}/plots/plot_ranks.py ${PROJECT_SOURCE_DIR}/plots/plot_wait.py
                 ${PROJECT_SOURCE_DIR}/plots/plot_workers.py
                 ${PROJECT_SOURCE_DIR}/plots/report.py
                 ${PROJECT_SOURCE_DIR}/plots/sweep.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/dlreset/plots)
install(FILES ${PROJECT_SOURCE_DIR}/plots/plotstyle.py DESTINATION ${CMAKE_INSTALL_DATADIR}/dlreset/plots)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
