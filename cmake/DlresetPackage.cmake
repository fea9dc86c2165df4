# CPack's DEB generator: `ci/package.sh` turns the install of cmake/DlresetInstall.cmake into two
# packages under /usr: dlreset_<version>_amd64.deb for workshop machines (the command, the plot
# scripts, the libraries), and dlreset-watch_<version>_amd64.deb, the watcher alone, which links
# no LibTorch, for a CI job that gates a Python training run. dlreset depends on dlreset-watch:
# `dlreset watch` finds the Python hook where dlreset-watch installs it.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dlreset)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL main watch)
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME dlreset)
set(CPACK_DEBIAN_WATCH_PACKAGE_NAME dlreset-watch)
set(CPACK_DEBIAN_MAIN_PACKAGE_DEPENDS "dlreset-watch (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_WATCH_PACKAGE_SECTION devel)
# The examples it installs are torch programs; the watcher itself runs any program, and reads a
# hung one's native stacks with eu-stack or gdb.
set(CPACK_DEBIAN_WATCH_PACKAGE_SUGGESTS "python3-torch, elfutils | gdb")
set(CPACK_COMPONENT_WATCH_DESCRIPTION "is my training loop killing its DataLoader workers?
dlreset-watch runs a training program (Python or not, one process or a
torchrun job) and follows its process tree from outside: it groups the
DataLoader workers into generations and reports every respawn, the peak of
live workers and workers left running. In Python programs a hook, put on
PYTHONPATH for the run, adds the traceback of every reset, extra iterators
and set_epoch calls that came too late. Each finding can fail the run with
its own exit status, for CI. It links no LibTorch.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Seed c8c47f43 maintainers <maintainers@users.noreply.a-seed-c8c47f43.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Each description's first line is its package's synopsis (CPack would put a
# CPACK_PACKAGE_DESCRIPTION_SUMMARY before it, so none is set).
set(CPACK_COMPONENT_MAIN_DESCRIPTION "reproduce and guard against Lightning 1.5.0's DataLoader worker reset
dlreset rebuilds, in C++ on LibTorch, the bug of PyTorch Lightning 1.5.0
that killed and re-spawned every DataLoader worker at every epoch (issue
#10389, fixed in 1.5.1), and counts every worker spawn, dataset load and
iterator reset of a buggy and a fixed run.
.
This package holds the dlreset command (its demo walks a workshop through
the investigation), the plot scripts, and the static libraries, headers
and CMake package (find_package(dlreset)) for testing a training loop of
one's own with GoogleTest.")
set(CPACK_DEBIAN_MAIN_DESCRIPTION "${CPACK_COMPONENT_MAIN_DESCRIPTION}")
set(CPACK_DEBIAN_WATCH_DESCRIPTION "${CPACK_COMPONENT_WATCH_DESCRIPTION}")
# Depends: what dpkg-shlibdeps finds the binary linked against, not a typed list.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_MAIN_PACKAGE_RECOMMENDS dataset-fashion-mnist)
# Python and matplotlib for the plot scripts (the demo needs neither); the -dev packages for
# building against the CMake package.
set(CPACK_DEBIAN_MAIN_PACKAGE_SUGGESTS
    "python3, python3-matplotlib, libtorch-dev, libgtest-dev, libgmock-dev, libboost-stacktrace-dev, zlib1g-dev")
# Debian's permissions (0755 directories) whatever the umask of the machine that packs.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

# What Debian asks of every package beside the files: the copyright, the changelog (gzip -9n,
# reproducible), and the lintian tags kept on purpose (docs/packaging.md).
set(changelog ${PROJECT_BINARY_DIR}/packaging/changelog)
add_custom_command(OUTPUT ${changelog}.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/packaging/changelog ${changelog}
  COMMAND gzip -9nf ${changelog}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog
  VERBATIM)
add_custom_target(dlreset_changelog ALL DEPENDS ${changelog}.gz)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${changelog}.gz
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${changelog}.gz
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/dlreset-watch COMPONENT watch)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME dlreset)


include(CPack)
