# Two nodes, for real launches (label "multinode"): dgemm-dist across two
# "nodes" made on this machine as network namespaces, each with its own
# hostname and address, joined by a veth pair, a slurmd on each and
# slurmctld on node1 (tests/multinode/two-nodes.sh), launched with srun and
# with mpirun over TCP on the CPU backend (tests/multinode/test-two-nodes.sh
# says what is checked).  Needs root, iproute2, util-linux, slurm-wlm and
# munge; skipped, saying why, where two nodes cannot be made.  Its daemons,
# ports and /tmp directories are its own (the nodes' namespaces), so it
# holds no lock with the slurm tests.
set(DD_MULTINODE_DIR ${PROJECT_SOURCE_DIR}/tests/multinode)

# What each rank would see when picking its GPU (node-local rank).
add_executable(dd-node-probe ${DD_MULTINODE_DIR}/node_probe.c)
target_link_libraries(dd-node-probe PRIVATE MPI::MPI_C)
target_compile_options(dd-node-probe PRIVATE ${DD_WARN})
target_compile_definitions(dd-node-probe PRIVATE ${DD_POSIX})

add_test(NAME multinode_two_netns_nodes_srun_and_mpirun_across_both
  COMMAND bash ${DD_MULTINODE_DIR}/test-two-nodes.sh
    $<TARGET_FILE:dgemm-dist> $<TARGET_FILE:dd-node-probe>)
set_tests_properties(multinode_two_netns_nodes_srun_and_mpirun_across_both PROPERTIES
  LABELS multinode TIMEOUT 180 SKIP_RETURN_CODE ${DD_SKIP_CODE} PROCESSORS 2
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

find_program(DD_SHELLCHECK shellcheck)
if(DD_SHELLCHECK)
  file(GLOB DD_MULTINODE_SCRIPTS ${DD_MULTINODE_DIR}/*.sh)
  add_test(NAME multinode_scripts_shellcheck_clean
    COMMAND ${DD_SHELLCHECK} -x ${DD_MULTINODE_SCRIPTS})
else()
  add_test(NAME multinode_scripts_shellcheck_clean
    COMMAND sh -c "echo 'shellcheck not installed: skipped'; exit ${DD_SKIP_CODE}")
  set_tests_properties(multinode_scripts_shellcheck_clean PROPERTIES SKIP_RETURN_CODE ${DD_SKIP_CODE})
endif()
set_tests_properties(multinode_scripts_shellcheck_clean PROPERTIES LABELS multinode TIMEOUT 60)
