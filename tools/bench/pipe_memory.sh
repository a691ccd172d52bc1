#!/usr/bin/env bash
# The forwarder's memory and compression speed on one large checkpoint, through the real
# path: examples/stencil3d ranks write raw float64 checkpoint files under
# LD_PRELOAD=libckptfwd.so, the forwarder (started by the first capture) stages them on
# /dev/shm, commits them to a store on disk, and leaves its stats line at idle exit.
#
#   tools/bench/pipe_memory.sh BUILD [FORWARDER...]
#
# Each FORWARDER binary (default BUILD/bin/ckptfwd-forwarder; CKPTFWD_FORWARDER selects it)
# is run PIPE_REPS times, interleaved round by round. Prints per run: peak_rss_bytes,
# bytes_captured, time_compress_s/_write_s/_commit_s/_hash_s and the MB/s per core of
# compression (bytes_captured / time_compress_s / CKPTFWD_WRITERS), the forwarder's CPU
# seconds (user + system, sampled from /proc shortly before it exits: robust to other load
# on the node), its VmHWM; then medians.
# It reports; it asserts nothing about time.
# Environment: PIPE_DIR (store parent, default /work/tmp-pipe: a disk), PIPE_SIZE (cells
# per rank, default "256 256 1024": 2 fields x 8 bytes = 1 GiB per rank), PIPE_NP (4
# ranks), PIPE_REPS (1), CKPTFWD_WRITERS (2), any other CKPTFWD_* knob.
# Everything it wrote (checkpoints, stores, staging of its jobs) is removed at the end.
set -uo pipefail

BUILD=${1:-build}
shift || true
BUILD=$(cd "$BUILD" && pwd) || exit 2
FWDS=("$@")
[ ${#FWDS[@]} -gt 0 ] || FWDS=("$BUILD/bin/ckptfwd-forwarder")
LIB=$BUILD/lib/libckptfwd.so
APP=$BUILD/bin/stencil3d
SCHEMA=$(cd "$(dirname "$0")/../../examples" && pwd)/demo.schema
for f in "$LIB" "$APP" "${FWDS[@]}"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "pipe_memory.sh: $f is missing" >&2; exit 2; }
done
ROOT=${PIPE_DIR:-/work/tmp-pipe}
read -r NX NY NZ <<<"${PIPE_SIZE:-256 256 1024}"
NP=${PIPE_NP:-4}
REPS=${PIPE_REPS:-1}
WRITERS=${CKPTFWD_WRITERS:-2}
mkdir -p "$ROOT" || exit 2
RESULTS=$ROOT/pipe_memory.$$.results
: >"$RESULTS"

stat_of() { grep -o "\"$1\" *: *[0-9.eE+-]*" <<<"$2" | sed 's/.*: *//'; }

run_one() {
  local fwd=$1 tag=$2 rep=$3 dir="$ROOT/run.$$.$2.$3"
  rm -rf "$dir" && mkdir -p "$dir"
  local stats=$dir/stats.jsonl job="pipe-$$-$tag-$rep"
  local t0 t1
  # VmHWM of this job's forwarder, sampled until it exits: the peak RSS of a forwarder
  # that has no peak_rss_bytes counter (a baseline binary).
  (
    hwm=0
    for _ in $(seq 1 3000); do
      for p in $(pgrep -u "$(id -u)" -f ckptfwd-forwarder); do
        { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "CKPTFWD_JOB_ID=$job" || continue
        v=$(awk '/^VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null)
        [ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v && echo "$hwm" >"$dir/hwm"
        # Its CPU time (user + system, clock ticks): robust to other load on the node.
        t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null)
        [ -n "$t" ] && echo "$t" >"$dir/cpu"
      done
      grep -q '"source":"forwarder"' "$stats" 2>/dev/null && break
      sleep 0.2
    done
  ) &
  local sampler=$!
  t0=$(date +%s.%N)
  env LD_PRELOAD="$LIB" CKPTFWD_FORWARDER="$fwd" CKPTFWD_CAPTURE="$dir/ckpt/*" \
    CKPTFWD_STATS_FILE="$stats" CKPTFWD_JOB_ID="$job" CKPTFWD_IDLE_EXIT=1 \
    CKPTFWD_LOG="$dir/fwd.log" CKPTFWD_SCHEMA="$SCHEMA" CKPTFWD_WRITERS="$WRITERS" \
    mpiexec.mpich -n "$NP" "$APP" --size "$NX" "$NY" "$NZ" --steps 1 --ckpt-every 1 \
    --ckpt-dir "$dir/ckpt" >"$dir/app.out" 2>&1 || {
    echo "pipe_memory.sh: the writer failed:" >&2; cat "$dir/app.out" >&2; return 1; }
  t1=$(date +%s.%N)
  local i
  for i in $(seq 1 240); do grep -q '"source":"forwarder"' "$stats" 2>/dev/null && break; sleep 0.25; done
  wait "$sampler"
  local hwm_kib
  hwm_kib=$(cat "$dir/hwm" 2>/dev/null || echo 0)
  local cpu_s
  cpu_s=$(awk -v t="$(cat "$dir/cpu" 2>/dev/null || echo 0)" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", t / hz}')
  local line
  line=$(grep '"source":"forwarder"' "$stats" | tail -n 1)
  [ -n "$line" ] || { echo "pipe_memory.sh: no forwarder stats line (see $dir/fwd.log)" >&2; return 1; }
  local rss cap comp wr com hs
  rss=$(stat_of peak_rss_bytes "$line"); cap=$(stat_of bytes_captured "$line")
  comp=$(stat_of time_compress_s "$line"); wr=$(stat_of time_write_s "$line")
  com=$(stat_of time_commit_s "$line"); hs=$(stat_of time_hash_s "$line")
  # rss_mib: the forwarder's own peak_rss_bytes ("-" for a baseline without it); hwm_mib:
  # its VmHWM as last sampled from /proc (may miss the very end of its life).
  awk -v tag="$tag" -v rep="$rep" -v rss="${rss:-}" -v cap="$cap" -v comp="$comp" -v wr="$wr" \
    -v com="$com" -v hs="${hs:-}" -v w="$WRITERS" -v hwm="$hwm_kib" -v cpu="$cpu_s" -v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
    'BEGIN { printf "%s %s rss_mib=%s hwm_mib=%.1f captured_mib=%.0f compress_s=%.3f write_s=%.3f commit_s=%.3f hash_s=%s mbps_per_core=%.1f fwd_cpu_s=%s wall_s=%.2f\n",
      tag, rep, (rss == "" ? "-" : sprintf("%.1f", rss / 1048576)), hwm / 1024, cap / 1048576, comp, wr, com,
      (hs == "" ? "-" : hs), (comp > 0 ? cap / 1e6 / comp / w : 0), cpu, wall }' | tee -a "$RESULTS"
  rm -rf "$dir" /dev/shm/ckptfwd-"$(id -u)"-"$job"-* 2>/dev/null
}

echo "pipe_memory: $NP ranks x ${NX}x${NY}x${NZ} float64 x 2 fields, writers=$WRITERS, store under $ROOT"
for rep in $(seq 1 "$REPS"); do
  for k in "${!FWDS[@]}"; do run_one "${FWDS[$k]}" "fwd$k" "$rep" || exit 1; done
done
/usr/bin/python3 - "$RESULTS" "${#FWDS[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for k in range(int(sys.argv[2])):
    vals = {}
    for r in rows:
        if r[0] != f"fwd{k}":
            continue
        for kv in r[2:]:
            key, v = kv.split("=")
            try:
                vals.setdefault(key, []).append(float(v))
            except ValueError:
                pass
    print(f"fwd{k} median:", " ".join(f"{key}={statistics.median(v):g}" for key, v in vals.items() if v))
PY
rm -f "$RESULTS"
