#!/usr/bin/env bash
# Agreement (docs/design.md §2 "Run pipeline"): an error raised on one rank
# only (DD_FAULT=setup:1, multiply:1, write:1) ends every rank within
# seconds, with exactly one "dgemm-dist: error:" line and the same exit
# status (1) on every rank, at 2 and 4 ranks.  Each rank's status is taken
# from the rank itself (common.sh's run), so mpirun's own clean-up cannot
# hide a rank left waiting.  The old output is kept, no temporary is left.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 40 -n 36 -k 44 --quiet || exit 1
"${mpirun[@]}" -n 1 "$DD_BIN" --in in.h5 --out c.h5 --quiet || exit 1
old=$(sum c.h5)

paths=(independent)
have_collective && paths=(collective independent)
cases=("setup auto" "multiply auto")
for io in "${paths[@]}"; do cases+=("write $io"); done

for c in "${cases[@]}"; do
    read -r fault io <<<"$c"
    for n in 2 4; do
        name_io=${io/auto/}
        begin "${fault}_fault_on_rank1_of_${n}${name_io:+_$name_io}"
        # several panels, so that the multiply fault strikes mid-way
        DD_FAULT="$fault:1" run "$n" 30 --in in.h5 --out c.h5 --force --panel 8 --io "$io" --quiet
        expect_rc 1 "injected fault"
        [ "$ms" -le 15000 ] || problem "took $ms ms to end"
        [ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
        no_temporaries .
        end
    done
done

finish
