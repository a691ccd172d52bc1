#!/usr/bin/env bash
# make demo: the stencil3d application checkpoints through ckptfwd, is "killed" halfway,
# restarts from its checkpoint through the library in a new job, and must end bit for bit
# where an uninterrupted run without the library ends.
#
#   examples/run_demo.sh BUILD        (BUILD: the cmake build dir, default ./build)
#
# Environment: CKPTFWD_DEMO_DIR (work dir, default BUILD/demo), DEMO_STEPS (default 40),
# DEMO_EVERY (checkpoint interval, default 5), DEMO_SIZE (cells per rank, default "48 48 48"),
# DEMO_NP (ranks, default 4). CKPTFWD_STAGE_DIR etc. pass through to the library.
# CKPTFWD_SCHEMA is set to examples/demo.schema (the layout of stencil3d's files), so the
# forwarder knows the variables of each raw checkpoint (docs/schemas.md).
# Exit status: 0 when every check passes, 1 when a check fails, 2 on a setup problem.
set -uo pipefail

BUILD=${1:-build}
if [ ! -d "$BUILD" ]; then
  echo "run_demo.sh: build dir '$BUILD' does not exist; run 'make' (or pass the build dir)" >&2
  exit 2
fi
BUILD=$(cd "$BUILD" && pwd)
SCHEMA=$(cd "$(dirname "$0")" && pwd)/demo.schema
LIB=$BUILD/lib/libckptfwd.so
CLI=$BUILD/bin/ckptfwd
APP=$BUILD/bin/stencil3d
for f in "$LIB" "$CLI" "$BUILD/bin/ckptfwd-forwarder" "$APP" "$SCHEMA"; do
  if [ ! -e "$f" ]; then
    echo "run_demo.sh: $f is missing; run 'make' first (it builds everything into $BUILD)" >&2
    exit 2
  fi
done
command -v mpiexec.mpich >/dev/null || { echo "run_demo.sh: mpiexec.mpich not found; run 'make deps'" >&2; exit 2; }

STEPS=${DEMO_STEPS:-40}
EVERY=${DEMO_EVERY:-5}
HALF=$(( (STEPS / 2 / EVERY) * EVERY ))  # the "kill" point: right after a checkpoint
read -r NX NY NZ <<<"${DEMO_SIZE:-48 48 48}"
NP=${DEMO_NP:-4}
WORK=${CKPTFWD_DEMO_DIR:-$BUILD/demo}
rm -rf "$WORK" && mkdir -p "$WORK" || { echo "run_demo.sh: cannot create $WORK" >&2; exit 2; }
CKPT=$WORK/ckpt                  # what the application thinks it writes to
STORE=$CKPT/.ckptfwd             # ckptfwd's default store for files captured in $CKPT
STATS_FILE=$WORK/stats.jsonl
LOG=$WORK/ckptfwd.log
JOB=demo-$$
FAIL=0

bold() { if [ -t 1 ]; then printf '\n\033[1m== %s\033[0m\n' "$*"; else printf '\n== %s\n' "$*"; fi; }
APP_CMD=(mpiexec.mpich -n "$NP" "$APP" --size "$NX" "$NY" "$NZ" --ckpt-every "$EVERY")

# The environment a job script sets (see examples/job_mpiexec.sh). Every run is a new job id,
# like a real restart after the batch system killed the first job.
with_ckptfwd() {
  local job=$1 stats=$2; shift 2
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CKPT/*" CKPTFWD_STATS_FILE="$stats" CKPTFWD_SCHEMA="$SCHEMA" \
      CKPTFWD_JOB_ID="$job" CKPTFWD_IDLE_EXIT="${CKPTFWD_IDLE_EXIT:-2}" CKPTFWD_LOG="$LOG" "$@"
}

# The forwarder appends its counters to $STATS_FILE when it exits (idle for CKPTFWD_IDLE_EXIT
# seconds after the last client left). Wait for the line of the job that just ran.
wait_forwarder_exit() {
  local job=$1 before=$2 i tries=60
  # No forwarder to drain (it never started, or already left): do not wait long.
  CKPTFWD_JOB_ID=$job "$CLI" drain >/dev/null 2>&1 || tries=6
  for i in $(seq 1 $tries); do
    [ "$(forwarder_lines)" -gt "$before" ] && return 0
    sleep 0.5
  done
  echo "run_demo.sh: no forwarder of job $job wrote a stats line to $STATS_FILE" >&2
  return 1
}
forwarder_lines() { cat "$STATS_FILE" 2>/dev/null | grep -c '"source" *: *"forwarder"'; }
# Sum of one numeric counter over all forwarder lines of the stats file (flat JSON objects).
stat_sum() {
  grep '"source" *: *"forwarder"' "$STATS_FILE" 2>/dev/null |
    grep -o "\"$1\" *: *[0-9.eE+-]*" | sed 's/.*: *//' | awk '{s+=$1} END {printf "%.0f", s}'
}

echo "ckptfwd demo: $NP ranks x ${NX}x${NY}x${NZ} cells, $STEPS steps, a checkpoint every $EVERY steps"
echo "work dir: $WORK"

bold "1/4 reference: $STEPS steps uninterrupted, WITHOUT ckptfwd"
"${APP_CMD[@]}" --steps "$STEPS" --ckpt-dir "$WORK/ref_ckpt" --out "$WORK/reference.digest" || {
  echo "run_demo.sh: the reference run failed; the demo application itself is broken" >&2; exit 2; }

bold "2/4 job 1: steps 0..$HALF under ckptfwd, then the job ends (as if killed at the time limit)"
echo "LD_PRELOAD=$LIB CKPTFWD_CAPTURE='$CKPT/*' mpiexec.mpich -n $NP stencil3d ..."
lines=$(forwarder_lines)
with_ckptfwd "$JOB-1" "$STATS_FILE" "${APP_CMD[@]}" --steps "$HALF" --ckpt-dir "$CKPT" || { echo "FAIL: job 1 under ckptfwd exited with an error"; FAIL=1; }
wait_forwarder_exit "$JOB-1" "$lines" || FAIL=1

echo
echo "What is in $CKPT on disk (plain ls, no library): captured checkpoints are not there,"
echo "only the store ckptfwd wrote:"
ls -la "$CKPT" | sed 's/^/  /'
n_regular=$(find "$CKPT" -maxdepth 1 -type f -name 'ckpt_*' | wc -l)
echo "  regular ckpt_* files in $CKPT: $n_regular (expected 0)"
[ "$n_regular" -eq 0 ] || { echo "FAIL: checkpoint files landed on disk directly (see $LOG)"; FAIL=1; }
echo "What the application sees through the library:"
with_ckptfwd "$JOB-ls" "$WORK/stats-ls.jsonl" ls "$CKPT" | tr '\n' ' ' | fold -s -w 100 | sed 's/^/  /'
echo

bold "3/4 job 2: restart from the newest checkpoint through ckptfwd, continue to step $STEPS"
lines=$(forwarder_lines)
with_ckptfwd "$JOB-2" "$STATS_FILE" "${APP_CMD[@]}" --steps "$STEPS" --ckpt-dir "$CKPT" --restart \
  --out "$WORK/restarted.digest" ||
  { echo "FAIL: the restart run under ckptfwd exited with an error"; FAIL=1; }
wait_forwarder_exit "$JOB-2" "$lines" || FAIL=1

bold "4/4 checks"
echo "uninterrupted, no library : $(cat "$WORK/reference.digest" 2>/dev/null)"
echo "restarted under ckptfwd   : $(cat "$WORK/restarted.digest" 2>/dev/null)"
if [ -s "$WORK/reference.digest" ] && cmp -s "$WORK/reference.digest" "$WORK/restarted.digest"; then
  echo "PASS: the restarted run ends bit for bit where the uninterrupted run ends"
else
  echo "FAIL: the final states differ"
  FAIL=1
fi

echo
echo "\$ ckptfwd verify $STORE"
"$CLI" verify "$STORE" 2>&1 | sed 's/^/  /' || { echo "FAIL: ckptfwd verify reports a problem"; FAIL=1; }

# The oracle: every checkpoint restored WITHOUT the library is byte-identical to what the
# reference run (no library) wrote for the same step and rank.
echo
echo "\$ ckptfwd restore $STORE --to $WORK/restored"
if "$CLI" restore "$STORE" --to "$WORK/restored" </dev/null 2>&1 | tail -n 3 | sed 's/^/  /'; then
  same=0 differ=0
  while IFS= read -r f; do
    if cmp -s "$f" "$WORK/ref_ckpt/$(basename "$f")"; then same=$((same + 1)); else
      differ=$((differ + 1)); echo "  differs from the run without the library: $f"; fi
  done < <(find "$WORK/restored" -type f -name 'ckpt_*_r*.bin')
  want=$(find "$WORK/ref_ckpt" -type f -name 'ckpt_*_r*.bin' | wc -l)
  echo "  restored checkpoints identical to the run without the library: $same of $want (differing: $differ)"
  [ "$differ" -eq 0 ] && [ "$same" -eq "$want" ] || { echo "FAIL: restored checkpoints"; FAIL=1; }
else
  echo "FAIL: ckptfwd restore failed"; FAIL=1
fi

# The schema describes what the application wrote: one of its files splits exactly.
echo
sample=$(find "$WORK/ref_ckpt" -type f -name 'ckpt_*_r0.bin' | sort | head -n 1)
echo "\$ ckptfwd schema check $SCHEMA $sample"
if [ -n "$sample" ] && "$CLI" schema check "$SCHEMA" "$sample" 2>&1 | tail -n 14 | sed 's/^/  /'; then :; else
  echo "FAIL: the demo schema does not describe the application's checkpoints"; FAIL=1
fi

bold "the store"
echo "\$ ckptfwd ls $STORE"
"$CLI" ls "$STORE" >"$WORK/ls.txt" 2>&1
n_ls=$(wc -l <"$WORK/ls.txt")
if [ "$n_ls" -gt 12 ]; then
  head -n 7 "$WORK/ls.txt" | sed 's/^/  /'
  echo "  ... ($((n_ls - 9)) more lines in $WORK/ls.txt)"
  tail -n 2 "$WORK/ls.txt" | sed 's/^/  /'
else
  sed 's/^/  /' "$WORK/ls.txt"
fi
echo
echo "\$ ckptfwd ls $STORE --vars     (what the forwarder learnt from the schema)"
if "$CLI" ls "$STORE" --vars >"$WORK/vars.txt" 2>&1 && grep -q '^temperature_F64LE_Array3D ' "$WORK/vars.txt"; then
  sed -n '1,/variable keys/p' "$WORK/vars.txt" | sed 's/^/  /'
else
  sed 's/^/  /' "$WORK/vars.txt"
  echo "FAIL: the store's files have no temperature variable from the demo schema"; FAIL=1
fi
captured=$(stat_sum files_captured)
app_files=$(( (STEPS / EVERY) * NP ))
stored=$(find "$STORE" -type f | wc -l)
containers=$(find "$STORE" -type f -name '*.ckc' | wc -l)
echo
echo "checkpoint files the application wrote : $app_files (each as <name>.tmp, then renamed)"
echo "file versions ckptfwd captured         : ${captured:-?}"
echo "files in the store                     : $stored ($containers containers + MANIFEST, $(du -sh "$STORE" | cut -f1))"

bold "stats ($STATS_FILE)"
# --mtbf: how often to checkpoint for a mean time between failures of a day (README,
# "How often to checkpoint"), from what the checkpoints cost the application.
if "$CLI" stats --file "$STATS_FILE" --mtbf 24h 2>/dev/null; then :; else
  echo "(ckptfwd stats --file is not available; raw JSON lines:)"
  cat "$STATS_FILE"
fi
if [ -s "$LOG" ]; then echo; echo "library/forwarder log $LOG (last lines):"; tail -n 5 "$LOG" | sed 's/^/  /'; fi

echo
if [ "$FAIL" -eq 0 ]; then echo "demo: PASS"; else echo "demo: FAIL"; fi
exit "$FAIL"
