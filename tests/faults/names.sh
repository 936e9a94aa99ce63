#!/usr/bin/env bash
# shellcheck disable=SC2015  # `test && test || problem` records a problem when either fails
# Names and sizes at their limits (docs/design.md §1, io/io_output.c,
# src/cli/cli.c):
#  - an --out name of any legal length (here 243 to 255 bytes) is written,
#    by a run and by gen: its temporary directory has a short fixed-length
#    name (.dgemm-dist.tmp.XXXXXX) where .<name>.tmp.XXXXXX would not fit,
#    and its owner file names the output, so the next run to that name
#    removes it after a crash (and leaves those of other names alone);
#  - a name longer than the file system allows is refused: exit 2, naming
#    the limit;
#  - dataset names as HDF5 resolves them: "/A" is "A" (gen refuses --a A
#    --b /A), ".", "/" and "./" name the root group, a dataset cannot be the
#    group holding another (--a g --b g/B): exit 2 with a message about the
#    names, never "is the disk full?"; "./A" is written as A and read back;
#  - --size 2147483647,1,2147483649: "the sizes are too large", exit 2.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 20 -n 18 -k 22 --quiet || exit 1
host=$(hostname)
sh -c 'exit 0' &
dead=$!
wait "$dead"
name_of() { printf "%${1}s" "" | tr ' ' "${2:-x}"; } # name_of LENGTH [CHAR]

# ---- long output names ----------------------------------------------------------
for len in 243 244 250 255; do
    begin "out_name_${len}_bytes_written"
    o=$(name_of "$len")
    run 2 30 --in in.h5 --out "$o" --quiet
    expect_rc 0 ''
    "$DD_COMPARE" product in.h5 "$o" >/dev/null 2>&1 || problem "the output is not the product"
    rm -f "$o"
    no_temporaries .
    end
done

begin gen_out_name_255_bytes_written
o=$(name_of 255 g)
run 2 30 gen --out "$o" -m 5 -n 6 -k 7 --quiet
expect_rc 0 ''
[ -f "$o" ] || problem "gen wrote no file"
rm -f "$o"
no_temporaries .
end

for len in 256 300; do
    begin "out_name_${len}_bytes_refused"
    run 2 30 --in in.h5 --out "$(name_of "$len")" --quiet
    expect_rc 2 'at most 255'
    no_temporaries .
    end
done
begin gen_out_name_256_bytes_refused
run 1 30 gen --out "$(name_of 256 g)" -m 5 -n 6 -k 7 --quiet
expect_rc 2 'at most 255'
no_temporaries .
end

# stale temporaries of long names: removed for this output when their owner
# is gone; another output's, or a live owner's, stay
long=$(name_of 250 L)
stale() { # stale DIR OWNER-TEXT
    mkdir "$1"
    printf '%s' "$2" >"$1/owner"
    echo "not HDF5" >"$1/$long"
}
begin stale_short_temporaries_of_long_name
stale .dgemm-dist.tmp.DEAD01 "$host $dead
$long
"
stale .dgemm-dist.tmp.OTHER1 "$host $dead
$(name_of 250 M)
"
stale .dgemm-dist.tmp.LIVE01 "$host $$
$long
"
run 2 30 --in in.h5 --out "$long" --quiet
expect_rc 0 ''
[ -e .dgemm-dist.tmp.DEAD01 ] && problem "the stale temporary of $long (owner gone) was not removed"
[ -f .dgemm-dist.tmp.OTHER1/owner ] || problem "another output's stale temporary was removed"
[ -f .dgemm-dist.tmp.LIVE01/owner ] || problem "the temporary of a live owner was removed"
rm -rf .dgemm-dist.tmp.* "$long"
end

# ---- dataset names --------------------------------------------------------------
# gen_refused NAME PATTERN ARGS... — exit 2, nothing written
gen_refused() {
    local pattern=$2
    begin "$1"
    shift 2
    rm -f g.h5
    run 2 30 gen --out g.h5 -m 4 -n 5 -k 6 "$@" --quiet
    expect_rc 2 "$pattern"
    grep -qi 'disk full' "$work/stderr" && problem "the message speaks of a full disk"
    [ -e g.h5 ] && problem "g.h5 was written"
    no_temporaries .
    end
}
gen_refused gen_same_dataset_as_slash_name 'same dataset "A"' --a A --b /A
gen_refused gen_same_dataset_through_dot 'same dataset "B"' --a ./B
gen_refused gen_a_is_dot 'root group' --a .
gen_refused gen_a_is_slash 'root group' --a /
gen_refused gen_b_is_dot_slash 'root group' --b ./
gen_refused gen_a_holds_b 'group holding "g/B"' --a g --b g/B
gen_refused gen_b_holds_a 'group holding "g/A"' --a g/A --b //g/
gen_refused gen_c_holds_a 'group holding "C/A"' --a C/A --with-c

begin gen_dot_slash_names_written_and_read
rm -f g.h5 o.h5
run 2 30 gen --out g.h5 -m 4 -n 5 -k 6 --a ./A --b g//B/ --quiet
expect_rc 0 ''
run 2 30 --in g.h5 --a /A --b ./g/B --out o.h5 --quiet
expect_rc 0 ''
h5ls -r g.h5 2>/dev/null | grep -Eq '^/A +Dataset' || problem "g.h5 has no dataset /A"
h5ls -r g.h5 2>/dev/null | grep -Eq '^/g/B +Dataset' || problem "g.h5 has no dataset /g/B"
no_temporaries .
end

begin run_c_is_root_group
rm -f o.h5
run 2 30 --in in.h5 --c / --out o.h5 --quiet
expect_rc 2 'root group'
[ -e o.h5 ] && problem "o.h5 was written"
no_temporaries .
end

# ---- sizes no rank holds ---------------------------------------------------------
for n in 1 2; do
    begin "size_2147483647_1_2147483649_${n}rank"
    run "$n" 30 --size 2147483647,1,2147483649 --out o.h5 --quiet
    expect_rc 2 'sizes are too large'
    [ -e o.h5 ] && problem "o.h5 was written"
    no_temporaries .
    end
done
begin size_2147483647_1_2147483649_dry_run
run 1 30 --size 2147483647,1,2147483649 --dry-run
expect_rc 2 'sizes are too large'
end

finish
