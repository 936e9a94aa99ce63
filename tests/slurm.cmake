# Slurm tests (label "slurm"): jobs/ submitted for real to a private
# single-node Slurm (munged, slurmctld, slurmd from Debian's slurm-wlm and
# munge; tests/slurm/private-slurm.sh), on the CPU backend.  The tests that
# start daemons hold RESOURCE_LOCK slurm; each starts and stops its own
# Slurm (trap), on ports the kernel picks.  Without the packages they fail
# and say what to install; they do not skip.
set(DD_SLURM_DIR ${PROJECT_SOURCE_DIR}/tests/slurm)
set(DD_SLURM_ENV "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

add_test(NAME slurm_sweeps_strong_srun_weak_mpirun_complete_with_csv_and_plots
  COMMAND bash ${DD_SLURM_DIR}/test-sweeps.sh $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm_sweeps_strong_srun_weak_mpirun_complete_with_csv_and_plots PROPERTIES
  LABELS slurm TIMEOUT 600 RESOURCE_LOCK slurm ENVIRONMENT "${DD_SLURM_ENV}")

add_test(NAME slurm_sbatch_defaults_cpu_only_environment_and_failure
  COMMAND bash ${DD_SLURM_DIR}/test-sbatch.sh $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm_sbatch_defaults_cpu_only_environment_and_failure PROPERTIES
  LABELS slurm TIMEOUT 300 RESOURCE_LOCK slurm ENVIRONMENT "${DD_SLURM_ENV}")

add_test(NAME slurm_broken_launch_srun_mpi_none_refused
  COMMAND bash ${DD_SLURM_DIR}/test-broken-launch.sh $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm_broken_launch_srun_mpi_none_refused PROPERTIES
  LABELS slurm TIMEOUT 180 RESOURCE_LOCK slurm ENVIRONMENT "${DD_SLURM_ENV}")

# No daemons: jobs/aggregate on made-up records with known answers.
add_test(NAME slurm_aggregate_known_speedup_efficiency_and_plots
  COMMAND bash ${DD_SLURM_DIR}/test-aggregate.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm_aggregate_known_speedup_efficiency_and_plots PROPERTIES
  LABELS slurm TIMEOUT 120)

# The job scripts pass shellcheck where it is installed (skipped, not
# passed, where it is not).
find_program(DD_SHELLCHECK shellcheck)
if(DD_SHELLCHECK)
  file(GLOB DD_SLURM_SCRIPTS ${DD_SLURM_DIR}/*.sh)
  add_test(NAME slurm_job_scripts_shellcheck_clean
    COMMAND ${DD_SHELLCHECK} -x
      ${PROJECT_SOURCE_DIR}/jobs/dgemm.sbatch ${PROJECT_SOURCE_DIR}/jobs/strong-scaling
      ${PROJECT_SOURCE_DIR}/jobs/weak-scaling ${PROJECT_SOURCE_DIR}/jobs/sweep-common.sh
      ${DD_SLURM_SCRIPTS})
else()
  add_test(NAME slurm_job_scripts_shellcheck_clean
    COMMAND sh -c "echo 'shellcheck not installed: skipped'; exit ${DD_SKIP_CODE}")
  set_tests_properties(slurm_job_scripts_shellcheck_clean PROPERTIES SKIP_RETURN_CODE ${DD_SKIP_CODE})
endif()
set_tests_properties(slurm_job_scripts_shellcheck_clean PROPERTIES LABELS slurm TIMEOUT 60)
