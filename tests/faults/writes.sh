#!/usr/bin/env bash
# Parallel writes and --sync (io/io_direct.c, io/io_direct_xfer.c, io/io_output.c).
#  - The direct path writes C with several threads per rank (DD_IO_THREADS=4
#    here), every rank at once: the file is one ordinary HDF5 file, equal to
#    the one a single writer makes (dd-compare), and h5dump reads it.
#  - A write that fails on one thread of one rank (DD_FAULT=write-thread:1:
#    the last share of each transfer fails half way, on a thread of its own)
#    or of every rank ends every rank with one message and exit 1, no hang,
#    the old output unchanged, no temporary left; also file to file, where
#    the pipeline's writer thread writes C behind the multiply.
#  - --sync: every rank fdatasyncs the temporary before its close, rank 0
#    fsyncs it before the link or rename and fsyncs the output's directory
#    after (strace -y shows each call with the file it was made on, in
#    order); without --sync none of them is made; a flush that fails
#    (DD_FAULT=sync-file) fails the run, the old output unchanged.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

# 1200^2 doubles: 5.5 MiB per rank on 2 ranks, so each transfer takes 4 threads
n=1200
"${mpirun[@]}" -n 1 "$DD_BIN" --size 64 --out c.h5 --quiet >/dev/null || exit 1
old=$(sum c.h5)

begin threaded_writes_make_the_single_writers_file_2ranks
DD_IO_THREADS=1 run 2 60 --size "$n" --out one.h5 --io direct --quiet
expect_rc 0 ''
DD_IO_THREADS=4 run 2 60 --size "$n" --out four.h5 --io direct --quiet
expect_rc 0 ''
"$DD_COMPARE" equal one.h5 four.h5 C >"$work/cmp" 2>&1 || problem "four.h5 differs from one.h5: $(head -2 "$work/cmp")"
if command -v h5dump >/dev/null 2>&1; then
    h5dump -H four.h5 >/dev/null 2>&1 || problem "h5dump cannot read four.h5"
fi
rm -f one.h5 four.h5
no_temporaries .
end

for spec in write-thread:1 'write-thread:*'; do
    label=${spec#write-thread:}
    label=${label/\*/every}
    begin "one_write_thread_fails_on_rank_${label}_of_2_old_output_kept"
    DD_FAULT=$spec DD_IO_THREADS=4 run 2 60 --size "$n" --out c.h5 --force --io direct --quiet
    expect_rc 1 'cannot write rows .*: Input/output error'
    [ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
    no_temporaries .
    end
done

# the same behind the multiply: file to file, C written by the pipeline's
# writer thread (src/driver/run_pipe.c)
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out big.h5 -m "$n" -n "$n" -k 64 --quiet || exit 1
begin one_write_thread_fails_file_to_file_on_rank_1_of_2_old_output_kept
DD_FAULT=write-thread:1 DD_IO_THREADS=4 run 2 60 --in big.h5 --out c.h5 --force --io direct --quiet
expect_rc 1 'cannot write rows .*: Input/output error'
[ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
no_temporaries .
end

# --sync whose flush fails (DD_FAULT=sync-file:0, rank 0's fsync of the file)
begin sync_flush_fails_nothing_committed_old_output_kept_2ranks
DD_FAULT=sync-file:0 run 2 60 --size 300 --out c.h5 --force --sync --quiet
expect_rc 1 'cannot flush C to disk \(fsync of .*nothing was committed, c\.h5 is as it was'
[ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
no_temporaries .
end

if ! strace -f -o /dev/null true 2>/dev/null; then
    echo "note: no strace (or no ptrace) here: the --sync cases are not run"
    finish
fi

# traced ARGS...: dgemm-dist on 2 ranks, each under strace; the calls in $work/trace
traced() {
    local t0
    rm -f "$work"/st.*
    t0=$(now_ms)
    timeout 120 "${mpirun[@]}" -n 2 strace -ff -qq -y -o "$work/st" \
        -e trace=fsync,fdatasync,link,linkat,rename,renameat,renameat2 "$DD_BIN" "$@" \
        >"$work/stdout" 2>"$work/stderr"
    rc=$?
    ms=$(($(now_ms) - t0))
    cat "$work"/st.* 2>/dev/null >"$work/trace"
}

begin sync_fsyncs_data_and_directory_2ranks
traced --size "$n" --out s.h5 --sync --quiet
[ "$rc" -eq 0 ] || problem "exit status $rc"
tmpre='/\.s\.h5\.tmp\.[^/]*/s\.h5>'
datas=$(grep -cE "^fdatasync\([0-9]+<$work$tmpre\) += 0" "$work/trace")
[ "$datas" -eq 2 ] || problem "$datas fdatasync calls on the temporary, expected one per rank (2)"
# rank 0's: fsync of the file, then its new name, then fsync of the directory
order=$(grep -hE "^(fsync|link|linkat|rename|renameat2?)\(" "$work"/st.* |
    sed -E "s#^fsync\([0-9]+<$work$tmpre\).*#F#; s#^fsync\([0-9]+<$work>\).*#D#; s#^(link|linkat|rename|renameat2?)\(.*#L#" |
    tr -d '\n')
[ "$order" = FLD ] || problem "rank 0's calls in the order '$order', expected FLD (fsync file, link, fsync dir)"
[ -f s.h5 ] || problem "s.h5 not committed"
end

# file to file (the pipeline, src/driver/run_pipe.c) flushes the same way
begin sync_fsyncs_data_and_directory_file_to_file_2ranks
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 600 -n 500 -k 400 --quiet || problem "gen failed"
traced --in in.h5 --out p.h5 --sync --quiet
[ "$rc" -eq 0 ] || problem "exit status $rc"
datas=$(grep -cE "^fdatasync\([0-9]+<$work/\.p\.h5\.tmp\.[^/]*/p\.h5>\) += 0" "$work/trace")
[ "$datas" -eq 2 ] || problem "$datas fdatasync calls on the temporary, expected one per rank (2)"
grep -qE "^fsync\([0-9]+<$work>\) += 0" "$work/trace" || problem "the output's directory was not fsync'ed"
"$DD_COMPARE" product in.h5 p.h5 >/dev/null 2>&1 || problem "p.h5 is not the product"
end

begin no_sync_no_fsync_2ranks
traced --size "$n" --out n.h5 --quiet
[ "$rc" -eq 0 ] || problem "exit status $rc"
syncs=$(grep -cE '^f(data)?sync\(' "$work/trace")
[ "$syncs" -eq 0 ] || problem "$syncs fsync/fdatasync calls without --sync"
end

finish
