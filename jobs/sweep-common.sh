# shellcheck shell=bash
# The shared part of jobs/strong-scaling and jobs/weak-scaling: options,
# the study directory, and job submission.  Sourced by those two scripts;
# each defines sweep_usage_sizes and sweep_plan (the list of runs) and then
# calls sweep_main "$@".
#
# A study directory holds:
#   study.conf   key=value: what was asked for, by which command, the job ids
#   runs.tsv     one row per run: series, ranks, nodes, size, job id, record
#   inputs/      HDF5 inputs, one per problem size (dgemm-dist gen)
#   records/     the runs' JSON Lines records (dgemm-dist --json)
#   logs/        Slurm output of every job
#   scaling.csv, plots/   written by jobs/aggregate when the runs are done

JOBS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

sweep_die() {
  printf '%s: error: %s\n' "$SWEEP_NAME" "$*" >&2
  exit 2
}

sweep_usage() {
  cat <<EOF
Usage: jobs/$SWEEP_NAME [options] [-- dgemm-dist arguments for every run]

Submits one Slurm job per run (jobs/dgemm.sbatch), a job generating each
input first (dgemm-dist gen), and an aggregation job after all of them
(jobs/aggregate: scaling.csv and plots/*.png in the study directory).

$(sweep_usage_sizes)
  --gpus LIST           GPU (= rank) counts, e.g. "1 2 4 8" [$opt_gpus]
  --dtype f64|f32       element type [$opt_dtype]
  --backend B           auto, cuda or cpu [$opt_backend]
  --repeat N            timed multiplies per run [$opt_repeat]
  --warmup N            untimed multiplies per run [$opt_warmup]
  --seed S              input seed [$opt_seed]
  --inputs file|memory  file: generate HDF5 inputs once per size and read
                        them; memory: --size, no files [$opt_inputs]
  --out DIR             study directory [scaling-$SWEEP_STUDY-<date>]
  --force               add runs to an existing study directory
  --partition P         Slurm partition [site default]
  --account A           Slurm account [site default]
  --gpus-per-node G     GPUs per node; a run of g GPUs gets ceil(g/G)
                        nodes [$opt_gpus_per_node]
  --tasks-per-node T    ranks per node [= --gpus-per-node]; with
                        --backend cpu no GPUs are requested
  --cpus-per-task C     CPUs per rank [dgemm.sbatch's default]
  --time T              time limit per run [$opt_time]
  --shared              let runs share nodes (default: --exclusive)
  --launcher L          srun or mpirun (DD_LAUNCHER of dgemm.sbatch) [${DD_LAUNCHER:-srun}]
  --gen-tasks N         ranks of each input-generation job [$opt_gen_tasks]
  --sbatch-args ARGS    more sbatch arguments for every job, e.g. "--qos=debug"
  --dgemm-dist PATH     the program [\$DGEMM_DIST, else dgemm-dist on PATH]
  --wait                return only when the aggregation job has ended, and
                        print its table
  --dry-run             print the sbatch commands (a runnable script), submit nothing
  -h, --help            this text
EOF
}

# ---- option defaults (the scripts may change them before sweep_main) --------
opt_gpus="1 2 4 8"
opt_dtype=f64
opt_backend=auto
opt_repeat=5
opt_warmup=1
opt_seed=1
opt_inputs="file"
opt_out=""
opt_force=0
opt_partition=""
opt_account=""
opt_gpus_per_node=4
opt_tasks_per_node=""
opt_cpus_per_task=""
opt_time=00:30:00
opt_exclusive=1
opt_launcher=${DD_LAUNCHER:-}
opt_gen_tasks=1
opt_sbatch_args=""
opt_dgemm_dist=${DGEMM_DIST:-}
opt_dry_run=0
opt_wait=0
run_args=()

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

# "N", "MxNxK" or "M,N,K" -> "M N K"
sweep_parse_size() {
  local s=${1//x/,}
  local -a d
  IFS=, read -r -a d <<<"$s"
  if ((${#d[@]} == 1)); then d=("${d[0]}" "${d[0]}" "${d[0]}"); fi
  ((${#d[@]} == 3)) || sweep_die "size '$1': give N, MxNxK or M,N,K"
  local x
  for x in "${d[@]}"; do
    if ! is_uint "$x" || ((x < 1)); then
      sweep_die "size '$1': dimensions must be positive integers"
    fi
  done
  echo "${d[0]} ${d[1]} ${d[2]}"
}

# Options common to both studies; the script's own go through sweep_option,
# which returns the number of arguments it used (0: not its option).
sweep_parse_args() {
  local used
  while (($#)); do
    case $1 in
      --gpus) opt_gpus=${2:?--gpus needs a list}; shift 2 ;;
      --dtype) opt_dtype=${2:?}; shift 2 ;;
      --backend) opt_backend=${2:?}; shift 2 ;;
      --repeat) opt_repeat=${2:?}; shift 2 ;;
      --warmup) opt_warmup=${2:?}; shift 2 ;;
      --seed) opt_seed=${2:?}; shift 2 ;;
      --inputs) opt_inputs=${2:?}; shift 2 ;;
      --out) opt_out=${2:?}; shift 2 ;;
      --force) opt_force=1; shift ;;
      --partition | -p) opt_partition=${2:?}; shift 2 ;;
      --account | -A) opt_account=${2:?}; shift 2 ;;
      --gpus-per-node) opt_gpus_per_node=${2:?}; shift 2 ;;
      --tasks-per-node) opt_tasks_per_node=${2:?}; shift 2 ;;
      --cpus-per-task) opt_cpus_per_task=${2:?}; shift 2 ;;
      --time) opt_time=${2:?}; shift 2 ;;
      --shared) opt_exclusive=0; shift ;;
      --exclusive) opt_exclusive=1; shift ;;
      --launcher) opt_launcher=${2:?}; shift 2 ;;
      --gen-tasks) opt_gen_tasks=${2:?}; shift 2 ;;
      --sbatch-args) opt_sbatch_args=${2?}; shift 2 ;;
      --dgemm-dist) opt_dgemm_dist=${2:?}; shift 2 ;;
      --dry-run) opt_dry_run=1; shift ;;
      --wait) opt_wait=1; shift ;;
      -h | --help) sweep_usage; exit 0 ;;
      --) shift; run_args=("$@"); break ;;
      *)
        used=0
        sweep_option "$@" || used=$?
        ((used > 0)) || sweep_die "unknown option '$1' (see --help)"
        shift "$used"
        ;;
    esac
  done

  opt_gpus=${opt_gpus//,/ }
  local g
  for g in $opt_gpus; do
    if ! is_uint "$g" || ((g < 1)); then
      sweep_die "--gpus: '$g' is not a positive integer"
    fi
  done
  [[ -n ${opt_gpus// /} ]] || sweep_die "--gpus: empty list"
  case $opt_dtype in f64 | f32) ;; *) sweep_die "--dtype must be f64 or f32" ;; esac
  case $opt_backend in auto | cuda | cpu) ;; *) sweep_die "--backend must be auto, cuda or cpu" ;; esac
  case $opt_inputs in file | memory) ;; *) sweep_die "--inputs must be file or memory" ;; esac
  case ${opt_launcher:-srun} in srun | mpirun) ;; *) sweep_die "--launcher must be srun or mpirun" ;; esac
  for g in "$opt_repeat" "$opt_warmup" "$opt_seed" "$opt_gpus_per_node" "$opt_gen_tasks"; do
    is_uint "$g" || sweep_die "'$g' is not a non-negative integer"
  done
  ((opt_repeat >= 1)) || sweep_die "--repeat must be at least 1"
  ((opt_gpus_per_node >= 1)) || sweep_die "--gpus-per-node must be at least 1"
  [[ -z $opt_tasks_per_node ]] || { is_uint "$opt_tasks_per_node" && ((opt_tasks_per_node >= 1)); } \
    || sweep_die "--tasks-per-node must be a positive integer"
  [[ -z $opt_cpus_per_task ]] || { is_uint "$opt_cpus_per_task" && ((opt_cpus_per_task >= 1)); } \
    || sweep_die "--cpus-per-task must be a positive integer"
  : "${opt_tasks_per_node:=$opt_gpus_per_node}"
}

# ---- submission -------------------------------------------------------------
# submit VAR sbatch-arguments...: submit with --parsable and store the job id
# in VAR; with --dry-run print the command as a line of shell that does the
# same, and store "$VAR" so that later dependencies refer to it.
sweep_submit() {
  local var=$1
  shift
  if ((opt_dry_run)); then
    local line
    printf -v line '%q ' sbatch --parsable "$@"
    # Earlier jobs appear as @name@; make them the shell variables set above.
    line=$(sed -E 's/@([a-z0-9_]+)@/${\1}/g' <<<"${line% }")
    # shellcheck disable=SC2016  # a line of shell to print, not to run
    printf '%s=$(%s)\n' "$var" "$line"
    printf -v "$var" '@%s@' "$var"
  else
    local out id
    out=$(sbatch --parsable "$@") || sweep_die "sbatch failed: sbatch $*"
    id=${out%%;*}
    is_uint "$id" || sweep_die "sbatch gave '$out', not a job id"
    printf -v "$var" '%s' "$id"
  fi
}

sweep_common_sbatch=()
sweep_set_common_sbatch() {
  sweep_common_sbatch=()
  [[ -z $opt_partition ]] || sweep_common_sbatch+=(--partition="$opt_partition")
  [[ -z $opt_account ]] || sweep_common_sbatch+=(--account="$opt_account")
  if [[ -n $opt_sbatch_args ]]; then
    local -a extra
    read -r -a extra <<<"$opt_sbatch_args"
    sweep_common_sbatch+=("${extra[@]}")
  fi
}

# Where sweep_plan records its runs: parallel arrays, one entry per run.
plan_series=()
plan_ranks=()
plan_m=()
plan_n=()
plan_k=()

plan_add() { # series ranks m n k
  plan_series+=("$1")
  plan_ranks+=("$2")
  plan_m+=("$3")
  plan_n+=("$4")
  plan_k+=("$5")
}

sweep_main() {
  sweep_parse_args "$@"
  sweep_plan
  ((${#plan_ranks[@]} > 0)) || sweep_die "nothing to run"

  local prog
  if [[ -n $opt_dgemm_dist ]]; then
    prog=$opt_dgemm_dist
  else
    prog=dgemm-dist
  fi
  if [[ $prog == */* ]]; then
    [[ -x $prog ]] || ((opt_dry_run)) || sweep_die "--dgemm-dist '$prog' is not an executable file"
    prog=$(cd "$(dirname "$prog")" && pwd)/$(basename "$prog")
  elif command -v "$prog" >/dev/null 2>&1; then
    prog=$(command -v "$prog")
  elif ((!opt_dry_run)); then
    sweep_die "dgemm-dist not found: pass --dgemm-dist PATH or set DGEMM_DIST"
  fi

  local dir=${opt_out:-scaling-$SWEEP_STUDY-$(date +%Y%m%d-%H%M%S)}
  [[ $dir == /* ]] || dir=$PWD/$dir
  if [[ -e $dir/study.conf ]]; then
    ((opt_force)) || sweep_die "'$dir' already holds a study; choose another --out, or --force to add runs to it"
    local key
    for key in "study=$SWEEP_STUDY" "dtype=$opt_dtype" "backend=$opt_backend"; do
      grep -qx "$key" "$dir/study.conf" \
        || sweep_die "'$dir' holds a study without $key; add to it only runs of the same kind"
    done
  fi
  if ((!opt_dry_run)); then
    mkdir -p "$dir/inputs" "$dir/records" "$dir/logs" || sweep_die "cannot create '$dir'"
  fi

  # Check every run's node split before anything is submitted.
  local i g nodes
  for i in "${!plan_ranks[@]}"; do
    g=${plan_ranks[i]}
    nodes=$(((g + opt_tasks_per_node - 1) / opt_tasks_per_node))
    if ((g % nodes != 0)); then
      sweep_die "$g ranks do not split evenly over $nodes nodes of at most" \
        "$opt_tasks_per_node ranks each; choose GPU counts that do"
    fi
  done

  sweep_set_common_sbatch
  export DGEMM_DIST=$prog
  [[ -z $opt_launcher ]] || export DD_LAUNCHER=$opt_launcher
  if ((opt_dry_run)); then
    echo "# $SWEEP_NAME --dry-run: the jobs it would submit"
    printf 'export DGEMM_DIST=%q\n' "$DGEMM_DIST"
    [[ -z $opt_launcher ]] || printf 'export DD_LAUNCHER=%q\n' "$DD_LAUNCHER"
    printf 'mkdir -p %q %q %q\n' "$dir/inputs" "$dir/records" "$dir/logs"
  fi

  # -- inputs: one generation job per distinct size --------------------------
  local -A gen_job=()
  local gen_ids=() size input jobvar
  local -A input_of=()
  for i in "${!plan_ranks[@]}"; do
    size=${plan_m[i]}x${plan_n[i]}x${plan_k[i]}
    [[ -z ${input_of[$size]:-} ]] || continue
    if [[ $opt_inputs == memory ]]; then
      input_of[$size]=-
      continue
    fi
    input=$dir/inputs/$size-$opt_dtype-s$opt_seed.h5
    input_of[$size]=$input
    if [[ -e $input ]]; then
      echo "# input $input exists: not generated again" >&2
      continue
    fi
    jobvar=gen_${#gen_ids[@]}
    sweep_submit "$jobvar" "${sweep_common_sbatch[@]}" \
      --time="$opt_time" --job-name="dd-gen-$size" --nodes=1 --ntasks-per-node="$opt_gen_tasks" \
      --gpus-per-node=0 --cpus-per-task=1 --output="$dir/logs/gen-$size-%j.out" \
      "$JOBS_DIR/dgemm.sbatch" gen --out "$input" -m "${plan_m[i]}" -n "${plan_n[i]}" \
      -k "${plan_k[i]}" --dtype "$opt_dtype" --seed "$opt_seed"
    gen_job[$size]=${!jobvar}
    gen_ids+=("${!jobvar}")
  done

  # -- runs ----------------------------------------------------------------------
  local run_ids=() rows=() tpn label record sb
  for i in "${!plan_ranks[@]}"; do
    g=${plan_ranks[i]}
    size=${plan_m[i]}x${plan_n[i]}x${plan_k[i]}
    nodes=$(((g + opt_tasks_per_node - 1) / opt_tasks_per_node))
    tpn=$((g / nodes))
    label=${plan_series[i]}-g$g
    record=$dir/records/$label.jsonl
    sb=("${sweep_common_sbatch[@]}" --time="$opt_time" --job-name="dd-$SWEEP_STUDY-$label"
      --nodes="$nodes" --ntasks-per-node="$tpn" --output="$dir/logs/$label-%j.out")
    if [[ $opt_backend == cpu ]]; then
      sb+=(--gpus-per-node=0)
    else
      sb+=(--gpus-per-node="$tpn")
    fi
    [[ -z $opt_cpus_per_task ]] || sb+=(--cpus-per-task="$opt_cpus_per_task")
    ((!opt_exclusive)) || sb+=(--exclusive)
    # A failed input job cancels its runs (rather than leaving them pending
    # forever), so that the aggregation still runs and reports them.
    [[ -z ${gen_job[$size]:-} ]] || sb+=(--dependency="afterok:${gen_job[$size]}" --kill-on-invalid-dep=yes)
    local args=()
    if [[ ${input_of[$size]} == - ]]; then
      args=(--size "${plan_m[i]},${plan_n[i]},${plan_k[i]}" --dtype "$opt_dtype" --seed "$opt_seed")
    else
      args=(--in "${input_of[$size]}")
    fi
    args+=(--backend "$opt_backend" --repeat "$opt_repeat" --warmup "$opt_warmup" --json "$record")
    jobvar=run_${#run_ids[@]}
    sweep_submit "$jobvar" "${sb[@]}" "$JOBS_DIR/dgemm.sbatch" "${args[@]}" "${run_args[@]}"
    run_ids+=("${!jobvar}")
    rows+=("$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "${plan_series[i]}" "$g" "$nodes" \
      "$tpn" "${plan_m[i]}" "${plan_n[i]}" "${plan_k[i]}" "$opt_dtype" "${!jobvar}" "records/$label.jsonl")")
  done

  # -- the study's description, before the job that reads it is submitted --
  if ((!opt_dry_run)); then
    local cmdline
    printf -v cmdline '%q ' "jobs/$SWEEP_NAME" "${SWEEP_ARGV[@]}"
    {
      printf 'study=%s\n' "$SWEEP_STUDY"
      printf 'created=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
      printf 'command=%s\n' "${cmdline% }"
      printf 'dgemm_dist=%s\n' "$prog"
      printf 'backend=%s\ndtype=%s\nrepeat=%s\nwarmup=%s\ninputs=%s\n' \
        "$opt_backend" "$opt_dtype" "$opt_repeat" "$opt_warmup" "$opt_inputs"
      sweep_describe
      printf 'gen_jobs=%s\n' "${gen_ids[*]}"
      printf 'run_jobs=%s\n' "${run_ids[*]}"
    } >>"$dir/study.conf"
    if [[ ! -e $dir/runs.tsv ]]; then
      printf 'series\tranks\tnodes\ttasks_per_node\tm\tn\tk\tdtype\tjob\trecord\n' >"$dir/runs.tsv"
    fi
    printf '%s\n' "${rows[@]}" >>"$dir/runs.tsv"
  fi

  # -- aggregation, after every run whatever its outcome ---------------------
  local dep agg_cmd agg_job=""
  dep=$(printf ':%s' "${run_ids[@]}")
  printf -v agg_cmd '%q ' python3 "$JOBS_DIR/aggregate" "$dir"
  sweep_submit agg_job "${sweep_common_sbatch[@]}" --time=00:15:00 \
    --job-name="dd-$SWEEP_STUDY-aggregate" --nodes=1 --ntasks=1 --cpus-per-task=1 \
    --gpus-per-node=0 --dependency="afterany$dep" --output="$dir/logs/aggregate-%j.out" \
    --wrap="${agg_cmd% }"
  if ((opt_dry_run)); then
    echo "# then: jobs/aggregate $dir  (scaling.csv, plots/*.png)"
    return 0
  fi
  printf 'aggregate_job=%s\n' "$agg_job" >>"$dir/study.conf"

  echo "$SWEEP_NAME: study $dir"
  echo "  input jobs:  ${gen_ids[*]:-(none)}"
  echo "  run jobs:    ${run_ids[*]}"
  echo "  aggregate:   $agg_job  -> $dir/scaling.csv, $dir/plots/"
  echo "  watch:       squeue -j $(
    IFS=,
    echo "${gen_ids[*]}${gen_ids[*]:+,}${run_ids[*]},$agg_job"
  )"
  ((opt_wait)) && sweep_wait "$dir" "$agg_job"
  return 0
}

# --wait: poll until the aggregation job has left the queue, show its log.
sweep_wait() {
  local dir=$1 job=$2 state
  echo "$SWEEP_NAME: waiting for job $job (aggregation, after every run)"
  while :; do
    state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case $state in
      PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | REQUEUED) sleep 5 ;;
      *) break ;;
    esac
  done
  cat "$dir/logs/aggregate-$job.out" 2>/dev/null || true
  # An empty state: the job has aged out of slurmctld's memory; the log tells.
  [[ -z $state || $state == COMPLETED ]] || sweep_die "aggregation job $job ended $state"
}
