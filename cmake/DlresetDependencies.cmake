# What dlreset needs besides LibTorch and Threads, with the same target names wherever each piece
# comes from: GTest::gtest_main (and GTest::gtest, GTest::gmock), benchmark::benchmark,
# CLI11::CLI11, nlohmann_json::nlohmann_json, fmt::fmt and ZLIB::ZLIB.
#
# On Debian 12 every piece is the system package (ci/install-deps.sh), exactly as before. A
# machine without those packages (a GPU host whose only LibTorch is pip's) uses the copies that
# ci/gpu-deps.sh puts in DLRESET_DEPS_DIR on a Debian machine: GoogleTest and Google Benchmark
# built from source here, the header-only libraries (fmt in header-only mode), zlib built from
# source. DLRESET_VENDORED_DEPS=ON skips the system packages altogether, which is how a Debian
# machine checks that the copies alone are enough.
#
# Included from the top-level CMakeLists.txt, at file scope: enable_language() and
# add_subdirectory() below must not run inside a function.

option(DLRESET_VENDORED_DEPS
       "Skip the system packages and take every dependency but LibTorch from DLRESET_DEPS_DIR" OFF)
set(DLRESET_DEPS_DIR "${PROJECT_SOURCE_DIR}/.gpu-deps" CACHE PATH
    "The vendored dependencies written by ci/gpu-deps.sh, used for whatever the system lacks")

if(DLRESET_VENDORED_DEPS)
  set(dlreset_vendored_reason "is not taken from the system (DLRESET_VENDORED_DEPS is ON)")
else()
  set(dlreset_vendored_reason "is not installed on this system")
endif()

# dlreset_use_vendored(<what> <debian package> <file under DLRESET_DEPS_DIR>): says that <what>
# comes from the vendored copy, or stops with what to do when that copy is missing too.
function(dlreset_use_vendored what debian_package relative)
  if(NOT EXISTS "${DLRESET_DEPS_DIR}/${relative}")
    message(FATAL_ERROR
      "dlreset needs ${what}, which ${dlreset_vendored_reason}, and its vendored copy "
      "${DLRESET_DEPS_DIR}/${relative} does not exist. On Debian 12, install ${debian_package} "
      "(ci/install-deps.sh does). Elsewhere, run ci/gpu-deps.sh on a Debian 12 machine and bring "
      "its .gpu-deps/ folder along, or set DLRESET_DEPS_DIR to where such a copy is.")
  endif()
  message(STATUS "dlreset: ${what} ${dlreset_vendored_reason}; using the copy in "
                 "${DLRESET_DEPS_DIR}/${relative}")
endfunction()

# Header-only libraries: an imported interface target over the copied headers. Imported include
# directories are system ones, so our -Werror does not apply to code we do not own. The copies
# also go first on every target's include path: a LibTorch whose CUDA headers are in /usr/include
# puts `-isystem /usr/include` on the targets that link it, and a system nlohmann_json there (the
# H200 image has one) would win over the copy wherever that flag came first.
function(dlreset_vendored_headers target what debian_package header)
  dlreset_use_vendored("${what}" ${debian_package} include/${header})
  add_library(${target} INTERFACE IMPORTED)
  set_target_properties(${target} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${DLRESET_DEPS_DIR}/include")
  include_directories(BEFORE SYSTEM "${DLRESET_DEPS_DIR}/include")
endfunction()

if(NOT DLRESET_VENDORED_DEPS)
  find_package(ZLIB QUIET)
  find_package(nlohmann_json QUIET)
  find_package(fmt QUIET)
  find_package(CLI11 QUIET)
endif()

if(NOT TARGET ZLIB::ZLIB)
  dlreset_use_vendored(zlib zlib1g-dev zlib/zlib.h)
  # zlib's own CMakeLists.txt renames zconf.h inside its source folder; these few lines build
  # the same library without writing anything there.
  enable_language(C)
  set(zlib_dir "${DLRESET_DEPS_DIR}/zlib")
  add_library(dlreset_vendored_zlib STATIC
    ${zlib_dir}/adler32.c ${zlib_dir}/compress.c ${zlib_dir}/crc32.c ${zlib_dir}/deflate.c
    ${zlib_dir}/gzclose.c ${zlib_dir}/gzlib.c ${zlib_dir}/gzread.c ${zlib_dir}/gzwrite.c
    ${zlib_dir}/infback.c ${zlib_dir}/inffast.c ${zlib_dir}/inflate.c ${zlib_dir}/inftrees.c
    ${zlib_dir}/trees.c ${zlib_dir}/uncompr.c ${zlib_dir}/zutil.c)
  target_include_directories(dlreset_vendored_zlib SYSTEM PUBLIC "${zlib_dir}")
  # What zlib's configure finds on any Linux: without unistd.h the gz* functions would call
  # lseek, read and close undeclared, an error for recent compilers. Public, so that every user
  # of zlib.h sees the same zconf.h settings as the library.
  target_compile_definitions(dlreset_vendored_zlib PUBLIC Z_HAVE_UNISTD_H)
  set_target_properties(dlreset_vendored_zlib PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_library(ZLIB::ZLIB ALIAS dlreset_vendored_zlib)
endif()

if(NOT TARGET nlohmann_json::nlohmann_json)
  dlreset_vendored_headers(nlohmann_json::nlohmann_json nlohmann_json nlohmann-json3-dev
                           nlohmann/json.hpp)
endif()
if(NOT TARGET CLI11::CLI11)
  dlreset_vendored_headers(CLI11::CLI11 CLI11 libcli11-dev CLI/CLI.hpp)
endif()
if(NOT TARGET fmt::fmt)
  # Header-only mode: the formatting code is compiled into each user, so no libfmt is needed.
  dlreset_vendored_headers(fmt::fmt fmt libfmt-dev fmt/format-inl.h)
  set_target_properties(fmt::fmt PROPERTIES INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
endif()

# GoogleTest and Google Benchmark from source, only when their suites are built (GoogleTest also
# for dlreset::testing, which is installed). SYSTEM keeps their headers out of our warnings;
# EXCLUDE_FROM_ALL builds only the libraries we link.
if(DLRESET_BUILD_TESTS OR DLRESET_INSTALL)
  if(NOT DLRESET_VENDORED_DEPS)
    find_package(GTest QUIET)
  endif()
  if(NOT TARGET GTest::gtest_main)
    dlreset_use_vendored(GoogleTest "libgtest-dev and libgmock-dev" googletest/CMakeLists.txt)
    set(BUILD_GMOCK ON)
    set(INSTALL_GTEST OFF)
    add_subdirectory("${DLRESET_DEPS_DIR}/googletest" "${CMAKE_BINARY_DIR}/_deps/googletest"
                     EXCLUDE_FROM_ALL SYSTEM)
  endif()
endif()

if(DLRESET_BUILD_BENCHMARKS)
  if(NOT DLRESET_VENDORED_DEPS)
    find_package(benchmark QUIET)
  endif()
  if(NOT TARGET benchmark::benchmark)
    dlreset_use_vendored("Google Benchmark" libbenchmark-dev benchmark/CMakeLists.txt)
    # Only the library: its own tests would need GoogleTest, and its -Werror is for its CI.
    set(BENCHMARK_ENABLE_TESTING OFF)
    set(BENCHMARK_ENABLE_GTEST_TESTS OFF)
    set(BENCHMARK_ENABLE_INSTALL OFF)
    set(BENCHMARK_INSTALL_DOCS OFF)
    set(BENCHMARK_ENABLE_WERROR OFF)
    set(BENCHMARK_ENABLE_LIBPFM OFF)
    # Debian's patch stops it from reading git tags, and Debian's build passes the version in
    # GIT_VERSION instead; "0.0.0" means "unknown" to it and makes it use its project() version.
    set(GIT_VERSION "0.0.0")
    add_subdirectory("${DLRESET_DEPS_DIR}/benchmark" "${CMAKE_BINARY_DIR}/_deps/benchmark"
                     EXCLUDE_FROM_ALL SYSTEM)
  endif()
endif()
