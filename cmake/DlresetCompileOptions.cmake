# Compile options shared by every dlreset target, applied through dlreset_target_defaults().

# Frame pointers and debug info make the reset traces cheap to capture and readable; the
# prefix map turns absolute source paths into repository-relative ones ("repro/fetching.cpp"),
# so a trace reads the same on every machine.
set(DLRESET_COMMON_OPTIONS
    -fno-omit-frame-pointer
    -ffile-prefix-map=${PROJECT_SOURCE_DIR}/=
    -Wall -Wextra)
if(DLRESET_WARNINGS_AS_ERRORS)
  list(APPEND DLRESET_COMMON_OPTIONS -Werror)
endif()

if(DLRESET_SANITIZE)
  add_compile_options(-fsanitize=${DLRESET_SANITIZE} -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${DLRESET_SANITIZE})
  # With the sanitizers' instrumentation, GCC 12 reports std::function members inside
  # libstdc++'s own std::regex compiler as maybe uninitialized (dlreset watch builds a regex);
  # the same code is clean without them. Only that one warning, only in sanitizer builds.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND DLRESET_COMMON_OPTIONS -Wno-maybe-uninitialized)
  endif()
endif()

function(dlreset_target_defaults target)
  target_compile_options(${target} PRIVATE ${DLRESET_COMMON_OPTIONS})
  target_compile_features(${target} PUBLIC cxx_std_17)
endfunction()
