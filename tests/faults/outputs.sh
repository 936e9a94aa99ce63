#!/usr/bin/env bash
# shellcheck disable=SC2015  # `test && test || problem` records a problem when either fails
# The output's name at commit, and the side file --json, checked before
# anything is computed (docs/design.md §1, io/io_output.c,
# io/io_output_checks.c).
#  - A file that appears at --out during the run (DD_FAULT=race-out:0: rank
#    0 creates it just before the commit) is never replaced without --force:
#    exit 1, "was created by something else", the file untouched, no
#    temporary.  With --force the run replaces it.
#  - --json that names the input or the output, or that cannot be written
#    (missing directory, a directory, a FIFO), is refused with exit 2 before
#    the multiply: every case also sets DD_FAULT=multiply:*, so a run that
#    got as far as computing fails with the injected fault's message instead
#    of the --json one.  No output file appears, the input is unchanged.
#    Names are compared as files: an output that does not exist yet is
#    still the output when --json spells it ./o.h5, by its absolute path,
#    through "..", a linked directory or a (dangling) symbolic link.
#  - A record that cannot be appended after the output's commit is a
#    warning that keeps the run's status, and leaves no partial line.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 20 -n 18 -k 22 --quiet || exit 1
in_sum=$(sum in.h5)

# ---- a file appears at --out just before the commit -------------------------------
begin race_out_without_force_not_replaced
DD_FAULT=race-out:0 run 2 30 --in in.h5 --out r.h5 --quiet
expect_rc 1 'was created by something else'
[ -f r.h5 ] && [ ! -s r.h5 ] || problem "r.h5 is not the empty file that appeared"
no_temporaries .
end

begin race_out_with_force_replaced
rm -f r.h5
DD_FAULT=race-out:0 run 2 30 --in in.h5 --out r.h5 --force --quiet
expect_rc 0 ''
"$DD_COMPARE" product in.h5 r.h5 >/dev/null 2>&1 || problem "r.h5 is not the product"
no_temporaries .
end

# ---- --json checked before computing ----------------------------------------------
mkdir jdir
mkfifo jfifo
# json_case NAME JSON PATTERN [SECS]
json_case() {
    begin "$1"
    rm -f o.h5
    DD_FAULT='multiply:*' run 2 "${4:-30}" --in in.h5 --out o.h5 --json "$2" --quiet
    expect_rc 2 "$3"
    [ -e o.h5 ] && problem "the output o.h5 was written"
    [ "$(sum in.h5)" = "$in_sum" ] || problem "the input changed"
    no_temporaries .
    end
}
json_case json_names_input in.h5 'json.*input'
json_case json_names_input_by_another_path "$work/./in.h5" 'json.*input'
ln -s in.h5 in-link.h5
json_case json_is_a_symlink_to_input in-link.h5 'json.*input'
json_case json_names_output o.h5 'json.*output'
# the output does not exist yet: the same file in other spellings (its
# directory resolved, then its name), and a dangling link to it
json_case json_names_output_as_dot_slash ./o.h5 'json.*output'
json_case json_names_output_by_absolute_path "$work/o.h5" 'json.*output'
json_case json_names_output_through_dotdot jdir/../o.h5 'json.*output'
ln -s . here
json_case json_names_output_through_linked_directory here/o.h5 'json.*output'
ln -s o.h5 o-link.h5
json_case json_is_a_dangling_link_to_output o-link.h5 'json.*output'
ln -s o-link.h5 o-link2.h5
json_case json_is_a_chain_of_links_to_output o-link2.h5 'json.*output'
begin json_names_output_given_in_another_spelling
rm -f o.h5
DD_FAULT='multiply:*' run 2 30 --in in.h5 --out "$work/here/./o.h5" --json o.h5 --quiet
expect_rc 2 'json.*output'
[ -e o.h5 ] && problem "the output o.h5 was written"
no_temporaries .
end
# a record that cannot be appended after a good commit (the disk filled
# during the run: DD_FAULT=json-short:0 writes half the line, then "no
# space") is a warning: exit 0, the output committed, the half line taken
# back so the file keeps whole records
begin json_cut_short_after_commit_is_a_warning
rm -f o.h5
echo '{"earlier":"record"}' >runs.jsonl
runs_sum=$(sum runs.jsonl)
DD_FAULT=json-short:0 run 2 30 --in in.h5 --out o.h5 --json runs.jsonl --quiet
expect_rc 0 ''
grep -q '^dgemm-dist: error:' "$work/stderr" && problem "an error line was printed"
grep -Eq '^dgemm-dist: warning: .*record.*No space left.*committed' "$work/stderr" ||
    problem "no warning naming the record and the committed output"
"$DD_COMPARE" product in.h5 o.h5 >/dev/null 2>&1 || problem "o.h5 is not the product"
[ "$(sum runs.jsonl)" = "$runs_sum" ] || problem "runs.jsonl changed (a partial line left?)"
no_temporaries .
end

# and a record beside the output, in a name of its own, is taken
begin json_beside_output_taken
rm -f o.h5 o.jsonl
run 2 30 --in in.h5 --out ./o.h5 --json "$work/o.jsonl" --quiet
expect_rc 0 ''
[ "$(wc -l <o.jsonl 2>/dev/null)" = 1 ] || problem "o.jsonl does not hold one record"
"$DD_COMPARE" product in.h5 o.h5 >/dev/null 2>&1 || problem "o.h5 is not the product"
no_temporaries .
end
json_case json_in_missing_directory "$work/no/such/dir/run.jsonl" 'json'
json_case json_is_a_directory jdir 'json'
json_case json_is_a_fifo jfifo 'json'

# the same FIFO without the injected fault: refused, never a run that
# blocks for ever opening the FIFO after the work is done
begin json_is_a_fifo_no_hang
rm -f o.h5
run 2 10 --in in.h5 --out o.h5 --json jfifo --quiet
expect_rc 2 'json'
[ -e o.h5 ] && problem "the output o.h5 was written"
[ -p jfifo ] || problem "jfifo is no longer a FIFO"
[ -d jdir ] && [ -z "$(ls -A jdir)" ] || problem "jdir changed"
no_temporaries .
end

finish
