# README tests (tests/readme/*.sh): what the README tells a user on the
# first day is true.  The option reference matches `--help` and
# `gen --help` (every option, range and choice); every shell block the
# README shows is marked (<!-- test: run|slurm|gpu|skip: why -->) and the
# marked commands run as written, in a temporary directory standing for the
# repository root (build/ is the build under test).  No oversubscription
# setting comes from the environment: the README's commands must carry
# their own `--oversubscribe`.
# TIMEOUT: about 3x the duration on a 2-core machine (options 1 s, commands
# 11 s, the Slurm job 9 s; a job the cluster cannot place fails after
# DD_README_SLURM_WAIT seconds instead of pending).
set(DD_README_DIR ${PROJECT_SOURCE_DIR}/tests/readme)
set(DD_README_ENV "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

add_test(NAME cli_readme_options_match_help
  COMMAND bash ${DD_README_DIR}/options.sh $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_readme_options_match_help PROPERTIES
  LABELS cli TIMEOUT 20 ENVIRONMENT "${DD_README_ENV}")

add_test(NAME cli_readme_commands_run_as_written
  COMMAND bash ${DD_README_DIR}/commands.sh run $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_readme_commands_run_as_written PROPERTIES
  LABELS cli TIMEOUT 45 PROCESSORS 2 ENVIRONMENT "${DD_README_ENV}")

add_test(NAME slurm_readme_commands_run_as_written
  COMMAND bash ${DD_README_DIR}/commands.sh slurm $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm_readme_commands_run_as_written PROPERTIES
  LABELS slurm TIMEOUT 90 RESOURCE_LOCK slurm
  ENVIRONMENT "${DD_README_ENV};DD_README_SLURM_WAIT=45")
