#!/usr/bin/env bash
# Inputs whose A lives elsewhere, is damaged, or is not a file at all
# (crafted by "dd-mkbad DIR inputs", tests/tools/dd_mkbad.c), on every I/O
# path (--io direct, independent, and collective where parallel HDF5 is
# built in), with the check and with --no-check:
#  - A an external link to another file, or a soft link to one: read from
#    that file (the direct path read A's offset in the other file from --in:
#    exit 3 with the check, a wrong C without it); a complete external raw
#    file and a virtual dataset whose sources are all there work too (the
#    collective path could not read a virtual dataset at all);
#  - a virtual dataset with a missing source file: exit 2 naming it (it
#    read the fill value and PASSED), also with --dry-run; a source smaller
#    than its mapping: exit 2 naming it (was 1, "is the file truncated?");
#  - A a dangling soft or external link (to a missing file or a missing
#    object), C (--beta) a dangling soft link: exit 2 naming the link and
#    where it points (was 1, "is the file damaged?");
#  - a fletcher32 checksum that fails: exit 2, "checksum ... corrupt" (was
#    1, "is the file truncated?");
#  - an input truncated inside A: exit 2, "truncated", by how many bytes
#    (was 1, "if another program is writing it, wait"), also with --dry-run;
#  - --in a FIFO, a symbolic link to one, and an external link, a virtual
#    source and an external raw file that are FIFOs: exit 2 at once, also
#    with --dry-run (every rank blocked in open(2) for ever).
# Every refusal leaves no output and no temporary, and no input changes.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"$DD_MKBAD" "$work" inputs || exit 1
mkfifo fifo.h5 fifo_target.h5 vds_fifo_src.h5 fifo.raw || skip "no FIFOs here"
ln -s fifo.h5 fifolink.h5
# truncated.h5: A's data (bytes 2048-18047) cut at byte 10000
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out good.h5 -m 40 -n 30 -k 50 --quiet || exit 1
head -c 10000 good.h5 >truncated.h5
# the regular files among the inputs (reading a FIFO would block)
inputs_sum() {
    find . -maxdepth 1 -type f \( -name '*.h5' -o -name '*.raw' \) ! -name o.h5 -exec sha256sum {} + |
        sort | sha256sum
}
sums=$(inputs_sum)
paths=(direct independent)
have_collective && paths+=(collective)

# works NAME IN ARGS... — exit 0 and C = A·B of IN's A and B, read through HDF5
works() {
    local in=$2
    begin "$1"
    shift 2
    rm -f o.h5
    run 2 30 --in "$in" --out o.h5 --quiet "$@"
    expect_rc 0 ''
    [ -f o.h5 ] && "$DD_COMPARE" product "$in" o.h5 >/dev/null 2>&1 ||
        problem "o.h5 is missing or not the product of $in's A and B"
    end
}

# refused NAME PATTERN [!ANTI] ARGS... — exit 2 within 20 s with one message
# matching PATTERN (and not ANTI), no output, no temporary
refused() {
    local pattern=$2 anti=""
    begin "$1"
    shift 2
    if [ "${1:0:1}" = '!' ]; then
        anti=${1:1}
        shift
    fi
    rm -f o.h5
    run 2 30 "$@"
    expect_rc 2 "$pattern"
    [ "$ms" -le 20000 ] || problem "took $ms ms"
    if [ -n "$anti" ] && grep '^dgemm-dist: error:' "$work/stderr" | grep -Eqi -- "$anti"; then
        problem "the message says /$anti/"
    fi
    [ -e o.h5 ] && problem "o.h5 was written"
    no_temporaries .
    end
}

for io in "${paths[@]}"; do
    for chk in --check --no-check; do
        t="${io}${chk/--/_}"
        works "external_link_$t" extlink.h5 --io "$io" "$chk"
        works "soft_link_to_external_link_$t" softext.h5 --io "$io" "$chk"
        works "external_raw_file_$t" extraw.h5 --io "$io" "$chk"
        works "virtual_sources_present_$t" vds.h5 --io "$io" "$chk"
        refused "virtual_source_missing_$t" 'virtual dataset.*vds_gone\.h5.*does not exist' \
            --in vds_missing.h5 --out o.h5 --io "$io" "$chk" --quiet
        refused "fletcher32_mismatch_$t" 'checksum.*corrupt' '!truncated' \
            --in fletcher.h5 --out o.h5 --io "$io" "$chk" --quiet
    done
    refused "dangling_soft_link_$io" '"A" is a soft link to "/nowhere", which does not exist' \
        --in dangling_soft.h5 --out o.h5 --io "$io" --quiet
    refused "dangling_external_link_missing_file_$io" \
        '"A" is an external link to "/A" in file gone\.h5, which does not exist' \
        --in dangling_ext.h5 --out o.h5 --io "$io" --quiet
    refused "dangling_external_link_missing_object_$io" \
        '"A" is an external link to "/nothing" in file .*target\.h5, which has no such object' \
        --in dangling_extobj.h5 --out o.h5 --io "$io" --quiet
    refused "dangling_soft_link_for_c_beta_$io" '"C" is a soft link to "/noC"' \
        --in softext.h5 --out o.h5 --beta 1 --io "$io" --quiet
    refused "truncated_inside_A_$io" 'truncated.*10000 bytes.*[0-9]+ bytes.*missing' '!wait' \
        --in truncated.h5 --out o.h5 --io "$io" --quiet
    refused "fifo_input_$io" 'FIFO, not a regular file' --in fifo.h5 --out o.h5 --io "$io" --quiet
done
refused virtual_source_short 'vds_short_src\.h5, which holds 48 values where the mapping needs 96' \
    --in vds_short.h5 --out o.h5 --quiet
refused virtual_source_selection_past_its_end 'vds_short_src\.h5, which has only 3 where the mapping needs 8' \
    --in vds_beyond.h5 --out o.h5 --quiet
refused virtual_source_missing_dry_run 'vds_gone\.h5.*does not exist' --in vds_missing.h5 --dry-run
refused dangling_soft_link_dry_run 'soft link to "/nowhere"' --in dangling_soft.h5 --dry-run
refused truncated_inside_A_dry_run 'truncated.*missing' '!wait' --in truncated.h5 --dry-run
refused fifo_input_dry_run 'FIFO' --in fifo.h5 --dry-run
refused symlink_to_fifo_input 'FIFO' --in fifolink.h5 --out o.h5 --quiet
refused symlink_to_fifo_input_dry_run 'FIFO' --in fifolink.h5 --dry-run
refused external_link_to_fifo 'fifo_target\.h5 is a FIFO' --in ext_fifo.h5 --out o.h5 --quiet
refused external_link_to_fifo_dry_run 'fifo_target\.h5 is a FIFO' --in ext_fifo.h5 --dry-run
refused virtual_source_fifo 'vds_fifo_src\.h5 is a FIFO' --in vds_fifo.h5 --out o.h5 --quiet
refused external_raw_file_fifo 'fifo\.raw, which is a FIFO' --in extraw_fifo.h5 --out o.h5 --quiet

begin inputs_untouched
: >"$work/stderr"
[ "$(inputs_sum)" = "$sums" ] || problem "an input file changed"
[ -p fifo.h5 ] && [ -p fifo_target.h5 ] && [ -p vds_fifo_src.h5 ] && [ -p fifo.raw ] ||
    problem "a FIFO is no longer a FIFO"
end

finish
