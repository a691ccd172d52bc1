#!/usr/bin/env bash
# What uncaptured calls cost under the preload library: bench_uncaptured run without and
# with LD_PRELOAD (CKPTFWD_CAPTURE naming a directory it never touches), in interleaved
# rounds; prints per kind the median CPU ns per call of each and the median ratio of the
# rounds (library / without).
# usage: tools/bench/bench_uncaptured.sh [BUILD_DIR] [ROUNDS] [ITERATIONS]
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-7}
ITER=${3:-200000}
LIB=$BUILD/lib/libckptfwd.so
BENCH=$BUILD/bin/bench_uncaptured
[[ -x "$BENCH" && -e "$LIB" ]] || { echo "bench_uncaptured.sh: build $BUILD first" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench_uncaptured.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
OUT=$DIR/results
for ((r = 0; r < ROUNDS; r++)); do
  for mode in direct library; do
    pre=""
    [[ $mode == library ]] && pre=$LIB
    env LD_PRELOAD="$pre" CKPTFWD_CAPTURE="$DIR/never/*" CKPTFWD_JOB_ID="bench-uncaptured-$$" \
      "$BENCH" --iterations "$ITER" --dir "$DIR" | sed "s/^/round=$r mode=$mode /" >>"$OUT"
  done
done
/usr/bin/python3 - "$OUT" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=") for kv in line.split())
    rows.setdefault((f["kind"], f["round"]), {})[f["mode"]] = float(f["cpu_ns_per_call"])
kinds = sorted({k for k, _ in rows})
print(f"{'kind':22} {'direct ns':>10} {'library ns':>11} {'ratio':>6}")
for k in kinds:
    pairs = [v for (kk, _), v in rows.items() if kk == k and len(v) == 2]
    d = statistics.median(p["direct"] for p in pairs)
    l = statistics.median(p["library"] for p in pairs)
    ratio = statistics.median(p["library"] / p["direct"] for p in pairs)
    print(f"{k:22} {d:10.0f} {l:11.0f} {ratio:6.3f}")
PY
