#!/usr/bin/env bash
# Many small files from one process: bench_smallwrite run directly and under the library
# (CKPTFWD_CAPTURE on its directory, the store on the same disk, staging in the default
# /dev/shm), in interleaved rounds.
# Prints per round the write seconds and the whole process's wall seconds (the difference
# is the library's exit wait: the commit of what was written), then the medians and the
# median ratio library/direct of the write time and of the whole time.
# usage: tools/bench/bench_smallwrite.sh [BUILD_DIR] [ROUNDS] [FILES] [SIZE]
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
FILES=${3:-10000}
SIZE=${4:-4096}
LIB=$BUILD/lib/libckptfwd.so
BENCH=$BUILD/bin/bench_smallwrite
[[ -x "$BENCH" && -e "$LIB" ]] || { echo "bench_smallwrite.sh: build $BUILD first" >&2; exit 1; }
BASE=$(mktemp -d "${TMPDIR:-/tmp}/bench_smallwrite.XXXXXX")
trap 'rm -rf "$BASE"' EXIT
OUT=$BASE/results
for ((r = 0; r < ROUNDS; r++)); do
  for mode in direct library; do
    dir=$BASE/$mode.$r
    mkdir -p "$dir"
    pre=""
    [[ $mode == library ]] && pre=$LIB
    t0=$(date +%s.%N)
    line=$(env LD_PRELOAD="$pre" CKPTFWD_CAPTURE="$dir/*" CKPTFWD_JOB_ID="bench-smallwrite-$$-$r" \
      CKPTFWD_IDLE_EXIT=1 "$BENCH" --dir "$dir" --files "$FILES" --size "$SIZE")
    t1=$(date +%s.%N)
    echo "round=$r mode=$mode $line wall=$(echo "$t1 - $t0" | bc)" | tee -a "$OUT"
    rm -rf "$dir"
  done
done
/usr/bin/python3 - "$OUT" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=") for kv in line.split())
    rows.setdefault(f["round"], {})[f["mode"]] = (float(f["seconds"]), float(f["wall"]))
pairs = [v for v in rows.values() if len(v) == 2]
for i, what in ((0, "write"), (1, "whole process (with exit wait)")):
    d = statistics.median(p["direct"][i] for p in pairs)
    l = statistics.median(p["library"][i] for p in pairs)
    ratio = statistics.median(p["library"][i] / p["direct"][i] for p in pairs)
    print(f"{what:32} direct {d:7.3f} s  library {l:7.3f} s  ratio {ratio:6.2f}")
PY
