#!/usr/bin/env bash
# make bench: ckptfwd against the physical limits of this node and against the usual
# compressors, side by side in ONE run.
#
#   tools/bench/run_bench.sh BUILD     (BUILD: the cmake build dir, default ./build)
#
# Parts (each its own script, also runnable alone):
#   1. bench_limits.sh  uncaptured-call overhead; checkpoints of BENCH_SIZES from BENCH_RANKS
#      MPI ranks written to tmpfs, to disk with fsync and under ckptfwd (with and without
#      fsync); the same as a job's second checkpoint (BENCH_NEXT_SIZES from
#      BENCH_NEXT_RANKS); restart reads (large files and many small ones) from disk and
#      through ckptfwd; fsync of one file; forwarder throughput per stage, peak RSS, store
#      contents; every byte read back and restored by `ckptfwd restore` verified
#   2. bench_demo.sh    the demo application (examples/stencil3d) with and without ckptfwd,
#      and the store's compression against gzip -6 and zstd -3 on the same files
#   3. bench_infer.sh   the cost of structure inference (skipped with BENCH_QUICK=1)
#   4. bench_crossnode.sh files shared across 2 simulated nodes (a file handed from rank to
#      rank across nodes, header then all ranks, N-1 pwrite): without the library, with
#      the forwarders as a group, and coordinated through the store alone
#   5. bench_dfs.sh     the store on a real distributed file system (GlusterFS, one FUSE
#      client per simulated node): many small files from 2 nodes x 4 ranks and 8 handoffs
#      across nodes, with and without the library on the same volume. Skipped where the
#      set-up cannot run (not root, no FUSE or GlusterFS).
#   6. bench_patterns.sh one checkpoint file written by a plain process in each write
#      pattern real codes use (write, scattered pwrite, fwrite, writev, an O_APPEND reopen,
#      ofstream, temp-and-rename, mmap, O_DIRECT, copy_file_range), directly to tmpfs and
#      the disk and under the library with a forwarder running or started by the process,
#      with and without fsync; and small files from a Python script, written and read back
#      in the same process and in a new job
#   7. bench_limits.sh again with the store's disk limited to BENCH_STORE_MBPS MB/s (1000,
#      a node's share of a parallel file system when every node checkpoints at once):
#      checkpoints of BENCH_LIMITED_SIZES ("512M 2G") from BENCH_LIMITED_RANKS ("1 4")
#      ranks, one round, and one fsync'd file, beside direct writes and reads through the
#      same limit. Skipped with BENCH_QUICK=1 (unless BENCH_STORE_MBPS is set) or
#      BENCH_STORE_MBPS=0, and where no cgroup
#      limit can be set (not root); a smaller fsync'd file or checkpoint than about a
#      tenth of a second of the limit passes within the throttle's first time slice.
# bench_report.py prints the tables and writes BENCH_DIR/bench.json and BENCH_DIR/bench.svg.
# Asserts nothing about time; fails (exit 1) if any byte does not come back exactly.
#
# Environment: BENCH_DIR (default BUILD/bench: the disk directory of the direct writes and
# of the stores), BENCH_SIZES ("64M 512M 2G", total per checkpoint), BENCH_RANKS ("1 2 4"),
# BENCH_REPS (rounds, 2), BENCH_SMALL_FILES (10000), BENCH_QUICK=1 (a 2-3 minute run: 64M and
# 256M, 1 and 4 ranks, one round, 2000 small files, one demo round, no inference part),
# BENCH_DEMO_REPS (3) and the demo's BENCH_SIZE/BENCH_STEPS/... (see bench_demo.sh), and any
# CKPTFWD_* knob for the ckptfwd runs.
set -uo pipefail

BUILD=${1:-build}
[ -d "$BUILD" ] || { echo "run_bench.sh: build dir '$BUILD' does not exist; run 'make'" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
for t in mpiexec.mpich gzip zstd awk cmp /usr/bin/python3; do
  command -v "$t" >/dev/null || { echo "run_bench.sh: '$t' not found; run 'make deps'" >&2; exit 2; }
done
WORK=${BENCH_DIR:-$BUILD/bench}
rm -rf "$WORK" && mkdir -p "$WORK" || { echo "run_bench.sh: cannot create $WORK" >&2; exit 2; }
WORK=$(cd "$WORK" && pwd)
QUICK=${BENCH_QUICK:-0}
export BENCH_QUICK=$QUICK

load() { awk '{print $1}' /proc/loadavg 2>/dev/null || echo "?"; }
T0=$SECONDS
echo "ckptfwd bench ($([ "$QUICK" = 1 ] && echo quick || echo full)): $(nproc) cores, load $(load), $(free -g | awk '/^Mem/{print $2}') GiB RAM"

"$HERE/bench_limits.sh" "$BUILD" "$WORK" "$WORK/limits.jsonl" || exit 1

echo
echo "demo application and compression (tools/bench/bench_demo.sh):"
if [ "$QUICK" = 1 ]; then
  BENCH_DEMO_REPS=${BENCH_DEMO_REPS:-1} BENCH_VARIANTS=${BENCH_VARIANTS:-compute direct ckptfwd} \
    "$HERE/bench_demo.sh" "$BUILD" "$WORK/demo" "$WORK/demo.json" || exit 1
else
  "$HERE/bench_demo.sh" "$BUILD" "$WORK/demo" "$WORK/demo.json" || exit 1
  echo
  echo "structure inference (tools/bench/bench_infer.sh):"
  "$HERE/bench_infer.sh" "$BUILD" "$WORK" || exit 1
  rm -f "$WORK"/infer/big.nc
fi

echo
echo "files shared across nodes (tools/bench/bench_crossnode.sh):"
"$HERE/bench_crossnode.sh" "$BUILD" "$WORK/crossnode" "$WORK/crossnode.json" || exit 1

echo
echo "the store on a distributed file system (tools/bench/bench_dfs.sh):"
"$HERE/bench_dfs.sh" "$BUILD" "$WORK/dfs.json" >"$WORK/dfs.out" 2>&1
case $? in
  0) grep -v -e '^ok:' -e '^test ' -e '^dfs: ' "$WORK/dfs.out" ;;
  77) echo "(skipped: $(grep -m1 '^SKIP' "$WORK/dfs.out"))" ;;
  *) cat "$WORK/dfs.out"; exit 1 ;;
esac

echo
echo "write patterns (tools/bench/bench_patterns.sh):"
"$HERE/bench_patterns.sh" "$BUILD" "$WORK/patterns" "$WORK/patterns.json" || exit 1
rm -rf "$WORK/patterns"/{running,started,small-lib}

LIMIT_MBPS=${BENCH_STORE_MBPS:-1000}
rm -f "$WORK/limited.jsonl"
# Quick runs skip it unless BENCH_STORE_MBPS is given.
if { [ "$QUICK" != 1 ] || [ -n "${BENCH_STORE_MBPS:-}" ]; } && [ "$LIMIT_MBPS" != 0 ]; then
  echo
  echo "the same on a store limited to $LIMIT_MBPS MB/s (tools/bench/bench_limits.sh, BENCH_STORE_MBPS):"
  BENCH_STORE_MBPS=$LIMIT_MBPS BENCH_PARTS="fsync1 ckpt" BENCH_REPS=1 \
    BENCH_SIZES=${BENCH_LIMITED_SIZES:-512M 2G} BENCH_RANKS=${BENCH_LIMITED_RANKS:-1 4} \
    BENCH_FSYNC_BYTES=${BENCH_LIMITED_FSYNC_BYTES:-256M} \
    "$HERE/bench_limits.sh" "$BUILD" "$WORK/limited" "$WORK/limited.jsonl"
  case $? in
    0) ;;
    3) echo "(skipped: no block-I/O limit can be set here)"; rm -f "$WORK/limited.jsonl" ;;
    *) exit 1 ;;
  esac
  rm -rf "$WORK/limited"
fi

echo
echo "ckptfwd against the limits of this node (tools/bench/bench_limits.sh):"
/usr/bin/python3 "$HERE/bench_report.py" "$WORK"
rc=$?
echo "load average $(load) at the end; $((SECONDS - T0)) s in all"
exit $rc
