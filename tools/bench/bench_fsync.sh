#!/usr/bin/env bash
# fsync of one captured checkpoint file against a direct write + fsync on the same disk.
#
#   tools/bench/bench_fsync.sh BUILD [ROUNDS] [MIB]   (defaults: ./build, 5, 64)
#
# Each round runs build/bin/bench_fsync twice (another content seed each round, so no
# round finds the previous one's chunks in the store), interleaved so both see the same machine:
#   direct   the file written straight into BENCH_DIR/direct (on the store's disk)
#   ckptfwd  the same under LD_PRELOAD=libckptfwd.so, captured, the store in
#            BENCH_DIR/store on the same disk; fsync returns once the bytes are committed
# The forwarder is started once before the rounds (as a job script would), so the rounds
# time the fsync path, not a forwarder start. Prints per-round figures, the medians and
# the ratios ckptfwd/direct. Asserts nothing about time.
# Environment: BENCH_DIR (default BUILD/bench-fsync; must be on a disk, not tmpfs, for a
# meaningful direct figure), any CKPTFWD_* knob for the forwarder.
set -uo pipefail
BUILD=${1:-build}
ROUNDS=${2:-5}
MIB=${3:-64}
[ -d "$BUILD" ] || { echo "bench_fsync.sh: build dir '$BUILD' does not exist" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
APP=$BUILD/bin/bench_fsync
LIB=$BUILD/lib/libckptfwd.so
FWD=$BUILD/bin/ckptfwd-forwarder
for f in "$APP" "$LIB" "$FWD"; do
  [ -e "$f" ] || { echo "bench_fsync.sh: $f is missing; build first" >&2; exit 2; }
done
WORK=${BENCH_DIR:-$BUILD/bench-fsync}
rm -rf "$WORK" && mkdir -p "$WORK/direct" "$WORK/capture" "$WORK/store" || exit 2
JOB="bench-fsync-$$"
envs=(CKPTFWD_CAPTURE="$WORK/capture/*" CKPTFWD_STORE="$WORK/store" CKPTFWD_JOB_ID="$JOB"
      CKPTFWD_LOG="$WORK/ckptfwd.log" CKPTFWD_IDLE_EXIT=5)
env "${envs[@]}" "$FWD" --daemon || { echo "bench_fsync.sh: forwarder did not start (see $WORK/ckptfwd.log)" >&2; exit 1; }

field() { grep -o "$1=[0-9.]*" | cut -d= -f2; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
: >"$WORK/direct.txt"
: >"$WORK/ckptfwd.txt"
for r in $(seq 1 "$ROUNDS"); do
  sync
  d=$("$APP" --mib "$MIB" --seed "$r" --path "$WORK/direct/ckpt.bin") || exit 1
  echo "$d" >>"$WORK/direct.txt"
  sync
  c=$(env "${envs[@]}" LD_PRELOAD="$LIB" "$APP" --mib "$MIB" --seed "$r" --path "$WORK/capture/ckpt_$r.bin" --keep) || exit 1
  echo "$c" >>"$WORK/ckptfwd.txt"
  echo "round $r  direct: $d"
  echo "round $r  ckptfwd: $c"
done
echo "medians of $ROUNDS rounds, $MIB MiB (seconds; ratio ckptfwd/direct):"
for k in write_s fsync_s close_s total_s; do
  dm=$(field "$k" <"$WORK/direct.txt" | median)
  cm=$(field "$k" <"$WORK/ckptfwd.txt" | median)
  printf '  %-8s direct %.4f  ckptfwd %.4f  ratio %s\n' "$k" "$dm" "$cm" \
    "$(awk -v a="$cm" -v b="$dm" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "-" }')"
done
# write + fsync: the time until the bytes are durable.
wf() { awk '{w=$1; f=$2; sub("write_s=","",w); sub("fsync_s=","",f); print w+f}'; }
dm=$(wf <"$WORK/direct.txt" | median); cm=$(wf <"$WORK/ckptfwd.txt" | median)
printf '  %-8s direct %.4f  ckptfwd %.4f  ratio %s\n' "durable" "$dm" "$cm" \
  "$(awk -v a="$cm" -v b="$dm" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "-" }')"
