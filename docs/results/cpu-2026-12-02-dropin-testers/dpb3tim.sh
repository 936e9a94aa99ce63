#!/usr/bin/env bash
# dpb3tim.sh BUILD OUT SCALAPACK_SRC [REPS] — ScaLAPACK's own PBLAS timer
# (dpb3tim) on PDGEMM alone: M = N = K = 1000, 2000, 3000, blocks of 64
# (IMB_ = MB_ = 64), 'N' 'N', alpha 2, beta 3, on 1 (1x1), 2 (1x2) and 4
# (2x2) ranks; three ways, interleaved (each repetition runs every way
# before the next): plain ScaLAPACK, the drop-in (BUILD's
# libdgemm-dist-scalapack.so, LD_PRELOAD) with DD_SCALAPACK_BACKEND=cpu
# (dgemm-dist multiplies), and the drop-in with the default (auto: on the
# CPU it hands the calls to ScaLAPACK).  REPS repetitions (default 3).
#
# Debian's dpb3tim (scalapack-mpi-test) is built with ScaLAPACK's default
# workspace of 2 MB (TOTMEM in pdblas3tim.f): it refuses N = 1000 on one
# rank ("Not enough memory. Need: 24008000").  So the timer is built here
# from ScaLAPACK's own source (SCALAPACK_SRC: a checkout of
# Reference-ScaLAPACK at Debian's version, v2.2.1) with TOTMEM = 400 MB
# and nothing else changed, linked against Debian's libscalapack-openmpi,
# in a temporary folder.
#
# OpenBLAS threads per rank: the machine's cores over the ranks (at least
# 1), the same for every way.  Raw logs to OUT/<way>-<ranks>rank-<rep>.txt;
# the table of medians (summarize.py) to stdout.
set -euo pipefail
build=$1 out=$2 src=$3 reps=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
dat=/usr/share/scalapack/PBLAS/TIMING/PDBLAS3TIM.dat
dropin=$build/libdgemm-dist-scalapack.so
for f in "$dat" "$dropin" "$src/PBLAS/TIMING/pdblas3tim.f"; do
    [ -e "$f" ] || { echo "dpb3tim.sh: $f is missing (tests/install-deps.sh; build first; SCALAPACK_SRC)" >&2; exit 2; }
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the timer: ScaLAPACK's files, TOTMEM raised, its error handlers as its
# CMake builds them (TestingPblas)
mkdir -p "$work/tim"
cp "$src"/PBLAS/TIMING/{pdblas3tim.f,pdblastim.f,pblastim.f} "$src"/PBLAS/SRC/PTOOLS/PB_C{warn,abort}.c "$work/tim"
sed -i 's/TOTMEM = 2000000,/TOTMEM = 400000000,/' "$work/tim/pdblas3tim.f"
grep -q "TOTMEM = 400000000," "$work/tim/pdblas3tim.f" || { echo "dpb3tim.sh: no TOTMEM to raise" >&2; exit 2; }
(cd "$work/tim" && mpicc -O2 -DTestingPblas -DAdd_ -I"$src/PBLAS/SRC" -c PB_Cwarn.c PB_Cabort.c &&
    mpif90 -O2 -std=legacy -fallow-argument-mismatch -o dpb3tim pdblas3tim.f pdblastim.f \
        pblastim.f PB_Cwarn.o PB_Cabort.o -lscalapack-openmpi -lopenblas) >"$out/build.txt" 2>&1 ||
    { cat "$out/build.txt" >&2; exit 1; }
tim=$work/tim/dpb3tim
# the shipped timing file with PDGEMM alone, the three sizes, blocks of 64
awk '
    /number of process grids/ { print "1\t\tnumber of process grids (ordered pairs of P & Q)"; next }
    /values of P$/ { print "@P@\t\tvalues of P"; next }
    /values of Q$/ { print "@Q@\t\tvalues of Q"; next }
    /number of tests problems/ { print "3\t\tnumber of tests problems"; next }
    /values of (TRANSA|TRANSB)$/ { print "\x27N\x27 \x27N\x27 \x27N\x27\t\t" substr($0, index($0, "values")); next }
    /values of (M|N|K|M_[ABC]|N_[ABC])$/ { print "1000 2000 3000\t\t" substr($0, index($0, "values")); next }
    /values of (IMB|INB|MB|NB)_[ABC]$/ { print "64 64 64\t\t" substr($0, index($0, "values")); next }
    /values of (RSRC|CSRC)_[ABC]$/ { print "0 0 0\t\t" substr($0, index($0, "values")); next }
    /values of (IA|JA|IB|JB|IC|JC)$/ { print "1 1 1\t\t" substr($0, index($0, "values")); next }
    /^PD[A-Z0-9]+ +[TF]/ && $1 != "PDGEMM" { sub(/ T/, " F") }
    /^PDGEMM +F/ { sub(/ F/, " T") }
    { print }' "$dat" >"$work/template.dat"
cores=$(nproc)
launch=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for rep in $(seq 1 "$reps"); do
    for grid in 1x1 1x2 2x2; do
        p=${grid%x*} q=${grid#*x} n=$((p * q))
        threads=$((cores / n > 0 ? cores / n : 1))
        sed -e "s/@P@/$p/" -e "s/@Q@/$q/" "$work/template.dat" >"$work/PDBLAS3TIM.dat"
        for way in scalapack dropin-cpu dropin-auto; do
            env=(-x OPENBLAS_NUM_THREADS=$threads -x DD_SCALAPACK_SUMMARY=1)
            case $way in
            dropin-cpu) env+=(-x LD_PRELOAD="$dropin" -x DD_SCALAPACK_BACKEND=cpu) ;;
            dropin-auto) env+=(-x LD_PRELOAD="$dropin") ;;
            esac
            log=$out/$way-${n}rank-$rep.txt
            (cd "$work" && "${launch[@]}" -n "$n" "${env[@]}" "$tim") >"$log" 2>&1
            echo "rep $rep, $grid, $way: $(grep -c '|  PDGEMM' "$log") timings" >&2
        done
    done
done
python3 "$here/summarize.py" "$out"
