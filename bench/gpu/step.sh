# step.sh — sourced by the GPU stage scripts (f32_stage.sh, for either type):
#   step LOG command...
# runs the command under a 300 s limit (a hang is a failure, not a lost
# call), its output to the terminal and appended to $OUT/LOG after a line
# naming it; a non-zero exit is logged and sets rc=1.
rc=0
step() {
    local log=$1
    shift
    echo "== $(date +%T) $*" | tee -a "$OUT/$log"
    timeout 300 "$@" 2>&1 | tee -a "$OUT/$log"
    local r=${PIPESTATUS[0]}
    [ "$r" = 0 ] || { echo "== exit $r" | tee -a "$OUT/$log"; rc=1; }
}
