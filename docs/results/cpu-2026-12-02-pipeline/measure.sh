#!/usr/bin/env bash
# measure.sh OLD NEW [N...] — file to file on 1 rank with the check on, the
# build before the pipeline (OLD) and after (NEW) alternately, twice per
# size, in one call: walls.txt (/usr/bin/time) and rec-old.jsonl,
# rec-new.jsonl (each run's record), then the table (table.py).
set -u
OLD=$1 NEW=$2
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4096 6144 8192)
here=$(cd "$(dirname "$0")" && pwd)
W=${DD_MEASURE_DIR:-/tmp/dd-pipe-measure}
mkdir -p "$W"
cd "$W" || exit 1
rm -f walls.txt rec-old.jsonl rec-new.jsonl
for n in "${sizes[@]}"; do
    "$NEW" gen --out "m$n.h5" -m "$n" -n "$n" -k "$n" --quiet --force || exit 1
    cat "m$n.h5" >/dev/null # page cache warm
    for rep in 1 2; do
        for which in old new; do
            bin=$OLD
            [ "$which" = new ] && bin=$NEW
            rm -f c.h5
            /usr/bin/time -f "%e" -o t.txt "$bin" --in "m$n.h5" --out c.h5 --check \
                --json "rec-$which.jsonl" >"out-$which-$n-$rep.txt" 2>&1 || exit 1
            echo "$n $rep $which $(tail -1 t.txt)" >>walls.txt
        done
    done
    rm -f "m$n.h5" c.h5
done
python3 "$here/table.py" "$W"
