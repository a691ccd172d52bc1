#!/usr/bin/env bash
# fsync of one captured checkpoint file against a direct write + fsync on the same disk.
#
#   tools/bench/bench_fsync.sh BUILD [ROUNDS] [MIB]   (defaults: ./build, 5, 64)
#
# Each round runs build/bin/bench_fsync twice (another content seed each round, so no
# round finds the previous one's chunks in the store), interleaved in another random order
# each round, so both see the same machine:
#   direct   the file written straight into BENCH_DIR/direct (on the store's disk)
#   ckptfwd  the same under LD_PRELOAD=libckptfwd.so, captured, the store in
#            BENCH_DIR/store on the same disk; fsync returns once the bytes are committed
# The forwarder is started once before the rounds (as a job script would), so the rounds
# time the fsync path, not a forwarder start. Prints per-round figures, the medians and
# the ratios ckptfwd/direct. Asserts nothing about time.
# Environment: BENCH_DIR (default BUILD/bench-fsync; must be on a disk, not tmpfs, for a
# meaningful direct figure), BENCH_BASE (another build dir, e.g. of the previous commit:
# a third variant `base` runs under its library and forwarder, its store beside), any
# CKPTFWD_* knob for the forwarders, BENCH_BULK_MIB (default 0: off): before each
# variant's fsync, the same variant writes and closes another file of that many MiB
# (bench_fsync --no-fsync, another seed, CKPTFWD_EXIT_WAIT=0) and waits BENCH_BULK_DELAY seconds (default
# 0.45; the forwarders then run with CKPTFWD_WAVE_WINDOW_MS=300), so that the fsync
# arrives while that file's batch is being compressed (direct: while its pages are
# written back).
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
BULK=${BENCH_BULK_MIB:-0}
BULK_DELAY=${BENCH_BULK_DELAY:-0.45}
WORK=${BENCH_DIR:-$BUILD/bench-fsync}
rm -rf "$WORK" && mkdir -p "$WORK/direct" "$WORK/capture" "$WORK/store" || exit 2
VARIANTS=(direct ckptfwd)
BASE=${BENCH_BASE:-}
if [ -n "$BASE" ]; then
  BASE=$(cd "$BASE" && pwd) || exit 2
  for f in "$BASE/lib/libckptfwd.so" "$BASE/bin/ckptfwd-forwarder"; do
    [ -e "$f" ] || { echo "bench_fsync.sh: $f is missing (BENCH_BASE)" >&2; exit 2; }
  done
  mkdir -p "$WORK/capture-base" "$WORK/store-base" || exit 2
  VARIANTS+=(base)
fi
JOB="bench-fsync-$$"
envs=(CKPTFWD_CAPTURE="$WORK/capture/*" CKPTFWD_STORE="$WORK/store" CKPTFWD_JOB_ID="$JOB"
      CKPTFWD_LOG="$WORK/ckptfwd.log" CKPTFWD_IDLE_EXIT=60)
[ "$BULK" != 0 ] && envs+=(CKPTFWD_WAVE_WINDOW_MS=300)
env "${envs[@]}" "$FWD" --daemon || { echo "bench_fsync.sh: forwarder did not start (see $WORK/ckptfwd.log)" >&2; exit 1; }
base_envs=(CKPTFWD_CAPTURE="$WORK/capture-base/*" CKPTFWD_STORE="$WORK/store-base"
           CKPTFWD_JOB_ID="$JOB-base" CKPTFWD_LOG="$WORK/base.log" CKPTFWD_IDLE_EXIT=60)
[ "$BULK" != 0 ] && base_envs+=(CKPTFWD_WAVE_WINDOW_MS=300)
if [ -n "$BASE" ]; then
  env "${base_envs[@]}" "$BASE/bin/ckptfwd-forwarder" --daemon ||
    { echo "bench_fsync.sh: the BENCH_BASE forwarder did not start (see $WORK/base.log)" >&2; exit 1; }
fi

# The pid of the forwarder of job $1 (the rounds' forwarders idle-exit only after 60 s,
# so one forwarder serves every round: its CPU counter covers them all).
fwd_pid() {
  local p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == */ckptfwd-forwarder ]] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "CKPTFWD_JOB_ID=$1" || continue
    echo "${p#/proc/}"
    return
  done
}
# CPU seconds (user + system) the forwarder of job $1 used so far.
fwd_cpu() {
  local p
  p=$(fwd_pid "$1")
  if [ -n "$p" ]; then awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$p/stat"; else echo 0; fi
}
# At the end, the forwarders this script started leave (they commit nothing more).
stop_forwarders() {
  local p
  for j in "$JOB" "$JOB-base"; do
    p=$(fwd_pid "$j")
    [ -n "$p" ] && kill -TERM "$p"
  done
}
trap stop_forwarders EXIT
field() { grep -o "$1=[0-9.]*" | cut -d= -f2; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
: >"$WORK/direct.txt"
: >"$WORK/ckptfwd.txt"
: >"$WORK/base.txt"
declare -A last_cpu
for v in ckptfwd base; do
  j=$JOB; [ "$v" = base ] && j=$JOB-base
  last_cpu[$v]=$(fwd_cpu "$j")
done
for r in $(seq 1 "$ROUNDS"); do
  # Each round in another order: a variant's place in the round (what ran just before it
  # on the disk and the cores) is no bias of the medians.
  for v in $(printf '%s\n' "${VARIANTS[@]}" | shuf); do
    sync
    if [ "$BULK" != 0 ]; then  # a large file closed just before, its batch in flight
      bulk=(--mib "$BULK" --seed $((r + 1000)) --no-fsync --keep)
      case $v in
        direct) "$APP" "${bulk[@]}" --path "$WORK/direct/bulk.bin" >/dev/null ;;
        ckptfwd) env "${envs[@]}" CKPTFWD_EXIT_WAIT=0 LD_PRELOAD="$LIB" "$APP" "${bulk[@]}" \
                   --path "$WORK/capture/bulk.bin" >/dev/null ;;
        base) env "${base_envs[@]}" CKPTFWD_EXIT_WAIT=0 LD_PRELOAD="$BASE/lib/libckptfwd.so" "$APP" "${bulk[@]}" \
                --path "$WORK/capture-base/bulk.bin" >/dev/null ;;
      esac || exit 1
      sleep "$BULK_DELAY"
    fi
    case $v in
      direct) out=$("$APP" --mib "$MIB" --seed "$r" --path "$WORK/direct/ckpt.bin") || exit 1 ;;
      ckptfwd) out=$(env "${envs[@]}" LD_PRELOAD="$LIB" "$APP" --mib "$MIB" --seed "$r" \
                     --path "$WORK/capture/ckpt_$r.bin" --keep) || exit 1 ;;
      base) out=$(env "${base_envs[@]}" LD_PRELOAD="$BASE/lib/libckptfwd.so" "$APP" --mib "$MIB" \
                  --seed "$r" --path "$WORK/capture-base/ckpt_$r.bin" --keep) || exit 1 ;;
    esac
    if [ "$v" != direct ]; then
      # The forwarder's CPU for this round (the commit runs inside the fsync): a figure
      # the load of a shared machine does not inflate as much as wall time.
      job=$JOB; [ "$v" = base ] && job=$JOB-base
      now_cpu=$(fwd_cpu "$job")
      out+=" fwd_cpu_s=$(awk -v a="$now_cpu" -v b="${last_cpu[$v]:-0}" 'BEGIN{printf "%.3f", a-b}')"
      last_cpu[$v]=$now_cpu
    fi
    echo "$out" >>"$WORK/$v.txt"
    echo "round $r  $v: $out"
  done
done
bulk=
[ "$BULK" != 0 ] && bulk=", each after a $BULK MiB file closed ${BULK_DELAY} s before"
echo "medians of $ROUNDS rounds, $MIB MiB$bulk (seconds; ratio to direct):"
# write + fsync: the time until the bytes are durable.
wf() { awk '{w=$1; f=$2; sub("write_s=","",w); sub("fsync_s=","",f); print w+f}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "-" }'; }
for k in write_s fsync_s close_s total_s durable fwd_cpu_s; do
  line=$(printf '  %-8s' "$k")
  dm=
  for v in "${VARIANTS[@]}"; do
    if [ "$k" = fwd_cpu_s ] && [ "$v" = direct ]; then line+=$(printf '  direct -     '); dm=0; continue; fi
    if [ "$k" = durable ]; then m=$(wf <"$WORK/$v.txt" | median); else m=$(field "$k" <"$WORK/$v.txt" | median); fi
    [ -z "$dm" ] && dm=$m
    if [ "$v" = direct ]; then
      line+=$(printf '  direct %.4f' "$m")
    else
      line+=$(printf '  %s %.4f (x%s)' "$v" "$m" "$(ratio "$m" "$dm")")
    fi
  done
  echo "$line"
done
echo "(durable: write_s + fsync_s, the time until the bytes are on the disk or the store)"
