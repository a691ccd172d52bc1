#!/usr/bin/env bash
# Restores and restarts of a checkpoint merged across ranks, larger than a reader's cache of
# decoded chunks (64 MiB). 16 ranks each write a netCDF file (BENCH_RM_VARS float32
# variables of BENCH_RM_ROWS x 256 values: 100 x 256 x 256, 26 MB a rank, 419 MB in all,
# /usr/bin/python3 with netCDF4) under the library into one container: each variable is one
# stream merged across the ranks, whose chunks each hold pieces of several ranks' files.
# Then, in interleaved rounds, each timed as whole processes:
#   (a) cp of the 16 files written without the library (the page cache's floor)
#   (b) ckptfwd restore STORE --to DIR
#   (c) ckptfwd verify STORE
#   (d) a restart: a new job's 16 ranks read their files through the library one after
#       the other (cat, each its own process)
#   (e) the same 16 ranks at once
# Every restored and read-back byte is compared with the files written without the
# library. Prints a table (median and min of the rounds, ratio of medians to (a)), writes
# OUT.json and OUT.svg (matplotlib); exit 1 when a byte differs or a step fails.
# usage: tools/bench/bench_restore_merged.sh [BUILD [WORK [OUT.json]]]
#        (defaults: build, BUILD/bench-restore-merged, BUILD/bench-restore-merged.json)
# Environment: BENCH_RM_VARS (100), BENCH_RM_ROWS (256), BENCH_RM_REPS (rounds, 5).
set -uo pipefail
export LC_ALL=C
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "bench_restore_merged.sh: build dir '${1:-build}' does not exist; run 'make'" >&2; exit 2; }
WORK=${2:-$BUILD/bench-restore-merged}
OUT=${3:-$BUILD/bench-restore-merged.json}
CLI=$BUILD/bin/ckptfwd LIB=$BUILD/lib/libckptfwd.so
VARS=${BENCH_RM_VARS:-100} ROWS=${BENCH_RM_ROWS:-256} REPS=${BENCH_RM_REPS:-5}
PY=/usr/bin/python3
for f in "$CLI" "$LIB" "$BUILD/bin/ckptfwd-forwarder"; do
  [[ -e $f ]] || { echo "bench_restore_merged.sh: $f is missing: run 'make'" >&2; exit 2; }
done
$PY -c 'import netCDF4, numpy, matplotlib' 2>/dev/null ||
  { echo "bench_restore_merged.sh: /usr/bin/python3 lacks netCDF4, numpy or matplotlib (make deps)" >&2; exit 2; }

rm -rf "$WORK"
DIRECT=$WORK/direct CAP=$WORK/ckpt STAGE=$WORK/stage
mkdir -p "$DIRECT" "$CAP" "$STAGE"
STORE=$CAP/.ckptfwd
JOB=bench-rm-$$
export CKPTFWD_STAGE_DIR=$STAGE CKPTFWD_LOG=$WORK/ckptfwd.log CKPTFWD_IDLE_EXIT=2
unset LD_PRELOAD CKPTFWD_CAPTURE CKPTFWD_STORE CKPTFWD_CONFIG CKPTFWD_DISABLE 2>/dev/null || true
fail() { echo "bench_restore_merged.sh: $*" >&2; exit 1; }

$PY - "$DIRECT" "$VARS" "$ROWS" <<'PY' || fail "generating the files failed"
import sys, numpy as np, netCDF4
out, nv, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(1)
for r in range(16):
    ds = netCDF4.Dataset(f"{out}/rank{r:02d}.nc", "w", format="NETCDF3_64BIT_OFFSET")
    ds.createDimension("y", rows); ds.createDimension("x", 256)
    y = np.linspace(0, 3, rows)[:, None] + r * 3; x = np.linspace(0, 6, 256)[None, :]
    for v in range(nv):  # smooth fields with a little noise, as a simulation's
        a = np.sin(y * (1 + v % 7) + x) * 100 + v + rng.normal(0, 0.01, (rows, 256))
        ds.createVariable(f"v{v:03d}", "f4", ("y", "x"))[:] = a.astype(np.float32)
    ds.close()
PY
bytes=$(du -cb "$DIRECT"/*.nc | tail -1 | cut -f1)
for f in "$DIRECT"/rank*.nc; do
  r=$(basename "$f" .nc)
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAP/*" CKPTFWD_JOB_ID=$JOB PMI_RANK=$((10#${r#rank})) \
    CKPTFWD_EXIT_WAIT=0 cp "$f" "$CAP/" || fail "writing $f under the library failed"
done
CKPTFWD_JOB_ID=$JOB timeout 300 "$CLI" drain >/dev/null || fail "ckptfwd drain failed"
n=$(find "$STORE" -maxdepth 1 -name '*.ckc' | wc -l)
echo "bench-restore-merged: 16 ranks x $VARS variables, $((bytes / 1000000)) MB, $n container(s), $REPS rounds"

now() { date +%s.%N; }
same_tree() {  # same_tree DIR: each rank's file below DIR equals the direct one
  local f g
  for f in "$DIRECT"/rank*.nc; do
    g=$(find "$1" -name "$(basename "$f")" -type f | head -1)
    [[ -n $g ]] && cmp -s "$f" "$g" || fail "$(basename "$f") under $1 differs from the run without the library"
  done
}
read_job() {  # read_job JOB seq|par: the ranks read their files through the library
  local f r
  for f in "$DIRECT"/rank*.nc; do
    r=$(basename "$f" .nc)
    if [[ $2 == par ]]; then
      env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAP/*" CKPTFWD_JOB_ID=$1 PMI_RANK=$((10#${r#rank})) \
        cat "$CAP/$r.nc" >"$WORK/rb/$r.nc" &
    else
      env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAP/*" CKPTFWD_JOB_ID=$1 PMI_RANK=$((10#${r#rank})) \
        cat "$CAP/$r.nc" >"$WORK/rb/$r.nc" || return 1
    fi
  done
  wait
}
stop_job() {  # the forwarder of read job $1 leaves (its views with it) before the next step
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/exe" 2>/dev/null) == */ckptfwd-forwarder ]] || continue
    { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "CKPTFWD_JOB_ID=$1" && kill -TERM "${p#/proc/}"
  done
  sleep 0.3
}

methods=(copy restore verify restart_seq restart_par)
declare -A times
for ((i = 1; i <= REPS; i++)); do
  for m in "${methods[@]}"; do
    rm -rf "$WORK/out" "$WORK/rb" && mkdir -p "$WORK/out" "$WORK/rb"
    t0=$(now)
    case $m in
      copy) cp "$DIRECT"/rank*.nc "$WORK/out/" || fail "cp failed" ;;
      restore) "$CLI" restore "$STORE" --to "$WORK/out" >/dev/null || fail "ckptfwd restore failed" ;;
      verify) "$CLI" verify "$STORE" >/dev/null || fail "ckptfwd verify failed" ;;
      restart_seq) read_job "$JOB-r$i-s" seq || fail "a read through the library failed" ;;
      restart_par) read_job "$JOB-r$i-p" par || fail "a read through the library failed" ;;
    esac
    t1=$(now)
    times[$m]+="$(echo "$t1 - $t0" | bc) "
    case $m in
      copy | restore) same_tree "$WORK/out" ;;
      restart_*) same_tree "$WORK/rb"; stop_job "$JOB-r$i-${m#restart_}" ;;
    esac
  done
done

$PY - "$OUT" "$bytes" "$n" "$VARS" "$BUILD" <<PY
import json, statistics, sys
out, nbytes, nc, nv, build = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
names = {"copy": "(a) cp of the files", "restore": "(b) ckptfwd restore", "verify": "(c) ckptfwd verify",
         "restart_seq": "(d) restart, ranks in turn", "restart_par": "(e) restart, 16 ranks at once"}
raw = {$(for m in "${methods[@]}"; do printf '"%s": [%s], ' "$m" "$(echo ${times[$m]} | tr ' ' ',')"; done)}
med = {m: statistics.median(v) for m, v in raw.items()}
print(f"{'method':34} {'median s':>9} {'min s':>7} {'/ (a)':>7} {'MB/s':>7}")
for m, v in raw.items():
    print(f"{names[m]:34} {med[m]:9.3f} {min(v):7.3f} {med[m] / med['copy']:7.2f} {nbytes / 1e6 / med[m]:7.0f}")
json.dump({"bytes": nbytes, "containers": nc, "variables": nv, "ranks": 16, "build": build,
           "seconds": raw, "median_s": med}, open(out, "w"), indent=1)
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 3.2))
ms = list(raw)
ax.barh([names[m] for m in ms], [med[m] for m in ms], color="#4477aa")
ax.invert_yaxis()
ax.set_xlabel(f"seconds (median of {len(raw['copy'])} rounds), {nbytes / 1e6:.0f} MB of 16 ranks")
ax.set_title("Restore and restart of a checkpoint merged across ranks")
fig.tight_layout()
fig.savefig(out.rsplit(".", 1)[0] + ".svg")
print("JSON:", out, " plot:", out.rsplit(".", 1)[0] + ".svg")
PY
