#!/usr/bin/env bash
# shellcheck disable=SC2015  # `test && test || problem` records a problem when either fails
# Names an attacker or a slip can plant (docs/design.md §1 "Output",
# io/io_output.c): the temporary's name is unpredictable, so symbolic links
# planted at the names an older version used (.c.h5.tmp.<pid> for the next
# PIDs) or at guessed names are never written through; the stale sweep does
# not follow a planted link to a directory; --out that is a link to the
# input, a dangling link, /dev/null or a FIFO is refused (exit 2) with and
# without --force, and none of them is touched.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 20 -n 18 -k 22 --quiet || exit 1
in_sum=$(sum in.h5)
host=$(hostname)
sh -c 'exit 0' &
dead=$!
wait "$dead"

# ---- planted links beside the output (in p/) --------------------------------------
begin planted_links_at_next_50_pids_and_guessed_names
mkdir p
cd p || exit 1
next=$(sh -c 'echo $$')
for i in $(seq 1 50); do
    ln -s "$work/in.h5" ".c.h5.tmp.$((next + i))"
done
for guess in XXXXXX aaaaaa AAAAAA 000000 Ab3dE9; do
    ln -s "$work/in.h5" ".c.h5.tmp.$guess"
done
# a link to a directory that looks like a stale temporary of a dead process:
# the sweep must not follow it and delete what lies behind it
mkdir victim
echo "$host $dead" >victim/owner
cp ../in.h5 victim/c.h5
victim_sum=$(sum victim/c.h5)
ln -s victim .c.h5.tmp.STALE1
run 2 60 --in "$work/in.h5" --out "$work/p/c.h5" --check --quiet
expect_rc 0 ''
[ "$(sum ../in.h5)" = "$in_sum" ] || problem "the input changed"
[ -f c.h5 ] && [ ! -L c.h5 ] || problem "c.h5 is not a regular file"
"$DD_COMPARE" product ../in.h5 c.h5 >/dev/null 2>&1 || problem "c.h5 is not the product"
[ "$(sum victim/c.h5)" = "$victim_sum" ] && [ -f victim/owner ] ||
    problem "the sweep followed the planted link .c.h5.tmp.STALE1 into victim/"
bad=0
for l in .c.h5.tmp.*; do
    if [ "$l" = .c.h5.tmp.STALE1 ]; then
        [ "$(readlink "$l")" = victim ] || bad=1
    elif [ ! -L "$l" ] || [ "$(readlink "$l")" != "$work/in.h5" ]; then
        bad=1
    fi
done
[ "$bad" -eq 0 ] || problem "a planted link was replaced or followed"
[ "$(find . -maxdepth 1 -name '.c.h5.tmp.*' | wc -l)" -eq 56 ] ||
    problem "a temporary was left, or a planted link removed"
cd "$work" || exit 1
end

# ---- --out that is not a fresh name or a regular file --------------------------------
ln -s in.h5 link.h5
ln -s "$work/nowhere.h5" dangling.h5
mkfifo fifo
for force in "" --force; do
    begin "out_symlink_to_input${force:+_force}"
    run 2 30 --in in.h5 --out link.h5 $force --quiet
    expect_rc 2 'input'
    [ "$(sum in.h5)" = "$in_sum" ] || problem "the input changed"
    [ -L link.h5 ] && [ "$(readlink link.h5)" = in.h5 ] || problem "link.h5 was replaced"
    no_temporaries .
    end
done

begin out_dangling_symlink_force
run 2 30 --in in.h5 --out dangling.h5 --force --quiet
expect_rc 2 'link'
[ -e "$work/nowhere.h5" ] && problem "a file was created through the dangling link"
[ -L dangling.h5 ] || problem "dangling.h5 is no longer a link"
no_temporaries .
end

begin out_dev_null_force
run 2 30 --in in.h5 --out /dev/null --force --quiet
expect_rc 2 'character device|regular file'
[ -c /dev/null ] || problem "/dev/null is no longer a character device"
no_temporaries /dev
end

for force in "" --force; do
    begin "out_fifo${force:+_force}"
    run 2 30 --in in.h5 --out fifo $force --quiet
    expect_rc 2 'FIFO|regular file'
    [ -p fifo ] || problem "fifo is no longer a FIFO"
    no_temporaries .
    end
done

begin out_directory_force
mkdir outdir
run 2 30 --in in.h5 --out outdir --force --quiet
expect_rc 2 'directory'
[ -d outdir ] && [ -z "$(ls -A outdir)" ] || problem "outdir changed"
no_temporaries .
end

finish
