#!/usr/bin/env bash
# A full disk (docs/design.md §1 "Output"): the output is written in a
# private temporary directory beside --out, its space is reserved before any
# data is written, and a write that cannot complete fails on every rank
# with one message about space: exit 1, no hang, the old output intact, no
# temporary left, no space leaked; also where the file system has no
# fallocate (the free space is compared instead).  --json on a full disk is
# refused before the read; with room it takes one line per run.  At the edge, where the data's
# reservation fits but the metadata written at close may not, a run either
# succeeds or fails the same clean way.  A 2 MiB tmpfs stands in for the disk;
# it is mounted in a private mount namespace where unshare(1) allows, so it
# disappears with the test even if the test is killed.
dir=$(cd "$(dirname "$0")" && pwd)
if [ -z "${DD_FAULTS_IN_NS:-}" ] && command -v unshare >/dev/null 2>&1 &&
    unshare --mount --propagation private true 2>/dev/null; then
    DD_FAULTS_IN_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
# shellcheck source=common.sh
. "$dir/common.sh"

fs="$work/fs"
mkdir -p "$fs"
if ! err=$(mount -t tmpfs -o size=2m tmpfs "$fs" 2>&1); then
    skip "cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): $err"
fi
dd_cleanup_hooks+=("umount '$fs' 2>/dev/null")

paths=(independent)
have_collective && paths=(collective independent)
free_kib() { df -k --output=avail "$fs" | tail -1 | tr -d ' '; }

# the committed file gives back what was reserved beyond its end (the
# margin for HDF5's metadata), for every path
for io in direct "${paths[@]}"; do
    begin "committed_output_keeps_no_reserved_space_${io}"
    run 2 30 --size 50 --out "$fs/r.h5" --io "$io" --quiet
    expect_rc 0 ''
    alloc=$(du -k "$fs/r.h5" | cut -f1)
    size=$(stat -c %s "$fs/r.h5")
    [ "$alloc" -le $((size / 1024 + 8)) ] ||
        problem "r.h5 holds $alloc KiB for $size bytes: the reservation beyond its end was kept"
    rm -f "$fs/r.h5"
    no_temporaries "$fs"
    end
done

# --json with room on this disk: each run appends one whole line
begin json_with_room_appended_2ranks
rm -f "$fs/runs.jsonl"
run 2 30 --size 50 --json "$fs/runs.jsonl" --quiet
expect_rc 0 ''
run 2 30 --size 50 --json "$fs/runs.jsonl" --quiet
expect_rc 0 ''
[ "$(wc -l <"$fs/runs.jsonl")" = 2 ] || problem "runs.jsonl does not hold two lines"
[ "$(tail -c1 "$fs/runs.jsonl" | od -An -c | tr -d ' ')" = '\n' ] || problem "runs.jsonl ends in a partial line"
rm -f "$fs/runs.jsonl"
end

# the old output, which every failed run must leave as it was
run 1 30 --size 50 --out "$fs/c.h5" --quiet
[ "$rc" -eq 0 ] || { echo "FAIL setup: could not write the first output (status $rc)"; cat "$work/stderr"; exit 1; }
old=$(sum "$fs/c.h5")
free0=$(free_kib)

# after a failed run: the old output as it was, no temporary, the space back
kept_clean() {
    [ "$(sum "$fs/c.h5")" = "$old" ] || problem "the old output changed"
    no_temporaries "$fs"
    [ "$(free_kib)" = "$1" ] || problem "free space $(free_kib) KiB afterwards, $1 KiB before"
}

# C of 1000×1000 f64 is 7.6 MiB: it does not fit (K is small to keep it quick)
for n in 1 4; do
    for io in "${paths[@]}"; do
        begin "c_does_not_fit_${n}rank_${io}"
        run "$n" 60 --size 1000,1000,16 --out "$fs/c.h5" --force --io "$io" --quiet
        expect_rc 1 'space'
        kept_clean "$free0"
        end
    done
done

begin "gen_does_not_fit_4ranks"
run 4 60 gen --out "$fs/g.h5" -m 1000 -n 1000 -k 1000 --quiet
expect_rc 1 'space'
[ -e "$fs/g.h5" ] && problem "gen left $fs/g.h5"
kept_clean "$free0"
end

# Without fallocate (NFSv3, some parallel file systems; DD_FAULT=no-fallocate
# takes that path on this tmpfs) the free space is compared instead: the
# same clean failure before any data is written, never collective writes
# into a full disk (which left ranks hanging inside MPI-IO, or a run failing
# later with a message about a dataset).
for io in direct "${paths[@]}"; do
    begin "gen_does_not_fit_no_fallocate_4ranks_${io}"
    DD_FAULT='no-fallocate:*' run 4 20 gen --out "$fs/g.h5" -m 2000 -n 2000 -k 2000 --io "$io" --quiet
    expect_rc 1 'not enough space'
    [ -e "$fs/g.h5" ] && problem "gen left $fs/g.h5"
    kept_clean "$free0"
    end
    begin "c_does_not_fit_no_fallocate_4ranks_${io}"
    DD_FAULT='no-fallocate:*' run 4 20 --size 1000,1000,16 --out "$fs/c.h5" --force --io "$io" --quiet
    expect_rc 1 'not enough space'
    kept_clean "$free0"
    end
done
# and where it fits, the same path writes the file
begin "fits_no_fallocate_2ranks_${paths[0]}"
DD_FAULT='no-fallocate:*' run 2 20 --size 100 --out "$fs/n.h5" --io "${paths[0]}" --quiet
expect_rc 0 ''
grep -q 'PASSED$' "$work/stdout" || problem "no PASSED check"
[ -f "$fs/n.h5" ] || problem "no n.h5"
rm -f "$fs/n.h5"
no_temporaries "$fs"
end

# At the edge: room for C's data (the reservation) give or take a page, but
# maybe not for the metadata written when the file is closed.  Each run
# either succeeds or fails cleanly: no hang, no crash, nothing left.
# C of 100×100 f64 is 80000 bytes, 20 pages; the owner file takes one more.
for io in "${paths[@]}"; do
    for pages in 21 22 23 24; do
        dd if=/dev/zero of="$fs/edge" bs=4k count=$(($(free_kib) / 4 - pages)) status=none
        free_e=$(free_kib)
        begin "edge_${pages}_pages_free_2ranks_${io}"
        run 2 10 --size 100 --out "$fs/e.h5" --io "$io" --check --quiet
        expect_rc '0|1' 'space|disk'
        if [ "$rc" -eq 0 ]; then
            grep -q 'PASSED$' "$work/stdout" || problem "exit 0 without a PASSED check"
            [ -f "$fs/e.h5" ] || problem "exit 0 but no e.h5"
        else
            [ -e "$fs/e.h5" ] && problem "e.h5 was left after a failure"
        fi
        rm -f "$fs/e.h5"
        kept_clean "$free_e"
        end
        # a hung run killed by timeout may leave its temporary: start clean
        rm -rf "$fs"/.e.h5.tmp.* "$fs/edge"
    done
done

# nearly full: a few KiB left, enough for the temporary directory, not for C
dd if=/dev/zero of="$fs/fill1" bs=4k count=$(($(free_kib) / 4 - 4)) status=none
free1=$(free_kib)
for io in "${paths[@]}"; do
    begin "nearly_full_${free1}KiB_left_4ranks_${io}"
    run 4 60 --size 100 --out "$fs/c.h5" --force --io "$io" --quiet
    expect_rc 1 'space'
    kept_clean "$free1"
    end
done

# already full: not a byte left
dd if=/dev/zero of="$fs/fill2" bs=4k status=none 2>/dev/null
free2=$(free_kib)
[ "$free2" -eq 0 ] || echo "note: the tmpfs still has $free2 KiB free after filling it"
for n in 1 4; do
    for io in "${paths[@]}"; do
        begin "already_full_${n}rank_${io}"
        run "$n" 60 --size 100 --out "$fs/c.h5" --force --io "$io" --quiet
        expect_rc 1 'space'
        kept_clean "$free2"
        end
    done
done

begin "gen_into_full_disk_4ranks"
run 4 60 gen --out "$fs/g.h5" -m 10 -n 10 -k 10 --quiet
expect_rc '[1-9]' 'space'
[ -e "$fs/g.h5" ] && problem "gen left $fs/g.h5"
kept_clean "$free2"
end

# --json on the full disk, the output elsewhere: refused before the read
# (exit 1), so no output is committed that the run then calls failed
begin "json_on_full_disk_refused_before_compute_2ranks"
rm -f "$work/j.h5"
run 2 30 --size 100 --out "$work/j.h5" --json "$fs/runs.jsonl" --quiet
expect_rc 1 'space for the record'
[ -e "$work/j.h5" ] && problem "the output was written (and committed) anyway"
[ -e "$fs/runs.jsonl" ] && problem "runs.jsonl was created"
kept_clean "$free2"
end

finish
