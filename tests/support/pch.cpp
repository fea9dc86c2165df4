// The translation unit the tests' precompiled header is built with (tests/CMakeLists.txt,
// dlreset_test_pch): it holds nothing of its own.
