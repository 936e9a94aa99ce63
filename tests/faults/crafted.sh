#!/usr/bin/env bash
# Sizes no machine can hold, from a crafted file or the command line, are
# refused cleanly: exit 2, one message about size or memory, within seconds,
# no crash (no SIGSEGV from an overflowed size), no output, no temporary.
#  - huge.h5 (dd-mkbad DIR faults): A (2^31-1)×(2^31+1), B (2^31+1)×2,
#    chunked and unwritten, so the file is tiny; big.h5: 10^6×10^6 each;
#  - --size 2147483647,1,2147483649;
#  - --panel 2^63-1 and --grid 641x6700417 (P·Q = 2^32+1: no negative or
#    wrapped number in the message);
#  - --size 200000 --backend cpu on one rank: 3 × 320 GB of blocks, more
#    than the host has (a larger size where the host has more), also with
#    --dry-run.
#  - external.h5: A kept in an external raw file shorter than it declares
#    (HDF5 would read the rest as zeros, and the check would pass).
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"$DD_MKBAD" "$work" faults || exit 1
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 8 -n 8 -k 8 --quiet || exit 1

# refused NAME RANKS PATTERN ARGS... — exit 2 within 20 s, nothing written
refused() {
    local n=$2 pattern=$3
    begin "$1"
    shift 3
    rm -f o.h5
    run "$n" 30 "$@"
    expect_rc 2 "$pattern"
    [ "$ms" -le 20000 ] || problem "took $ms ms"
    [ -e o.h5 ] && problem "o.h5 was written"
    no_temporaries .
    end
}
size_words='memory|GiB|bytes|2\^64|too (large|big)|size'

for n in 1 4; do
    refused "huge_chunked_file_${n}rank" "$n" "$size_words" --in huge.h5 --out o.h5 --quiet
done
refused huge_chunked_file_dry_run 1 "$size_words" --in huge.h5 --dry-run
refused big_chunked_file_1rank 1 'memory' --in big.h5 --out o.h5 --quiet
refused size_2147483647_1_2147483649 1 "$size_words" --size 2147483647,1,2147483649 --out o.h5 --quiet
refused size_2147483647_1_2147483649_dry_run 1 "$size_words" --size 2147483647,1,2147483649 --dry-run
refused panel_2pow63_minus_1 1 'panel' --in in.h5 --out o.h5 --panel 9223372036854775807 --quiet
refused grid_641x6700417 1 'grid' --in in.h5 --out o.h5 --grid 641x6700417 --quiet
refused external_raw_file_short 2 'external file .*shorter than declared' --in external.h5 --out o.h5 --quiet
if grep -Eq '(^|[^0-9A-Za-z])-[0-9]' "$work/stderr"; then
    echo "FAIL grid_641x6700417_message: a negative number in: $(grep '^dgemm-dist: error:' "$work/stderr")"
    fails=$((fails + 1))
fi

# a square size whose three f64 blocks (24·n² bytes) exceed this host's memory
mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
n=200000
while [ "$((24 * n * n / 1024))" -le "$((mem_kib * 2))" ]; do n=$((n * 2)); done
refused "cpu_memory_plan_size_${n}" 1 'memory.*GiB|GiB.*memory' --size "$n" --backend cpu --out o.h5 --quiet
refused "cpu_memory_plan_size_${n}_dry_run" 1 'memory.*GiB|GiB.*memory' --size "$n" --backend cpu --dry-run

finish
