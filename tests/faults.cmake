# faults.cmake — what the program guarantees when things go wrong
# (tests/faults/*.sh, label "faults"): a full disk, planted links and
# special files at --out, a file appearing at --out during the run, --json
# checked before computing, signals mid-write and stale temporaries, one
# rank failing alone, sizes no machine holds, a check that says FAILED.
# Faults are injected with DD_FAULT (src/base/dd_fault.h) and crafted files
# (tests/tools/dd_mkbad.c, "dd-mkbad DIR faults").  A script that cannot run
# here (no tmpfs mount) exits 77 and is reported as skipped.
# Included after core.cmake (sorted order), which sets DD_TEST_ENV.
# TIMEOUT: 2-3x the duration measured on 2 cores (-j2): about 29 (19 once no
# run hangs), 6-17, 19 (9), 20, 11, 7 and 13 s in the order below, 104 s in
# all (PROCESSORS 2: they run one at a time under -j2).
function(dd_fault_test name script timeout)
  add_test(NAME ${name} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/faults/${script})
  set_tests_properties(${name} PROPERTIES LABELS "faults" TIMEOUT ${timeout}
    SKIP_RETURN_CODE 77 PROCESSORS 2 ENVIRONMENT "${DD_TEST_ENV}")
endfunction()

dd_fault_test(faults_full_disk_fails_clean_old_output_kept        disk.sh      60)
dd_fault_test(faults_planted_links_and_special_outputs_refused    links.sh     30)
dd_fault_test(faults_output_race_and_json_checked_before_compute  outputs.sh   50)
dd_fault_test(faults_signals_mid_write_and_stale_temporaries      signals.sh   60)
dd_fault_test(faults_one_rank_error_ends_all_ranks_same_status    agreement.sh 30)
dd_fault_test(faults_impossible_sizes_refused_no_crash            crafted.sh   20)
dd_fault_test(faults_check_failed_nothing_committed               verify.sh    40)
dd_fault_test(faults_inputs_links_virtual_damaged_and_fifos       inputs.sh    120)
dd_fault_test(faults_names_at_their_limits_long_outputs_datasets   names.sh     90)
dd_fault_test(faults_interrupts_timeout_ctrl_c_twice_long_writes    interrupts.sh 150)
