# sanitize.cmake — the library and the CLI under AddressSanitizer and
# UndefinedBehaviorSanitizer: a second, host-only tree (DD_SANITIZE) built
# inside this one and the api, faults and unit labels run there; any
# sanitizer report fails the test (tests/sanitize/run.sh).  Label
# "sanitize"; not registered inside a sanitized tree itself.
# TIMEOUT: the build and the three labels take about 2-3 minutes on 2 cores.
if(NOT DD_SANITIZE)
  add_test(NAME sanitize_asan_ubsan_api_faults_unit
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/sanitize/run.sh ${PROJECT_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/sanitized)
  set_tests_properties(sanitize_asan_ubsan_api_faults_unit PROPERTIES
    LABELS sanitize TIMEOUT 900 RUN_SERIAL TRUE
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
