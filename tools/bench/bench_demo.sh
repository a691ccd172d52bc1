#!/usr/bin/env bash
# make bench, part 2 (tools/bench/run_bench.sh): the demo application's checkpoints with and
# without ckptfwd, side by side in ONE run, and the compression against gzip and zstd.
#
#   tools/bench/bench_demo.sh BUILD WORK JSON   (BUILD: the cmake build dir; WORK: its own
#                                                scratch dir; JSON: the figures, for the report)
#
# The writer is the demo application (examples/stencil3d): 4 ranks, each writing one raw
# float64 checkpoint file per checkpoint step (smooth 3-D fields, 4 MiB per file by default,
# 16 files = 64 MiB). Variants, interleaved round by round so they see the same machine:
#   compute   the same run without checkpoints (to isolate the checkpoint overhead)
#   direct    checkpoints written straight to the file system, no library
#   direct+fsync  the same, with fsync before close (durable, as many codes do)
#   ckptfwd   under LD_PRELOAD=libckptfwd.so; the time includes the wait at exit until
#             everything is committed to the store
#   ckptfwd-started  the same with the forwarder started by the job script before mpiexec
#             (ckptfwd-forwarder --daemon, not timed), instead of by the first checkpoint
#   ckptfwd+fsync the same, fsync returning only once the version is committed
# The ckptfwd runs set CKPTFWD_SCHEMA to examples/demo.schema, as run_demo.sh does, so the
# forwarder maps every file's variables (files mapped and time inferring are printed).
# Compression: ckptfwd's store (bytes captured / bytes stored, from its stats) against
# gzip -6 and zstd -3 (single thread) on the concatenation of the same files.
#
# It reports RATIOS and medians measured here and now; it asserts nothing about time.
# Environment: BENCH_DEMO_REPS (default 3), BENCH_SIZE (cells
# per rank, default "64 64 64"), BENCH_STEPS (8), BENCH_EVERY (2), BENCH_NP (4),
# BENCH_VARIANTS (a subset of the list above; must include compute and direct), and any
# CKPTFWD_* knob (e.g. CKPTFWD_CODEC=zlib, CKPTFWD_WRITERS=1) for the ckptfwd runs.
set -uo pipefail

BUILD=${1:-build}
WORK=${2:?usage: bench_demo.sh BUILD WORK JSON}
OUT_JSON=${3:?usage: bench_demo.sh BUILD WORK JSON}
[ -d "$BUILD" ] || { echo "bench_demo.sh: build dir '$BUILD' does not exist; run 'make'" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
LIB=$BUILD/lib/libckptfwd.so
CLI=$BUILD/bin/ckptfwd
APP=$BUILD/bin/stencil3d
# The demo's schema, as a job script would set it: the forwarder maps every file's variables.
SCHEMA=$(cd "$(dirname "$0")/../../examples" && pwd)/demo.schema
VARIANTS=(${BENCH_VARIANTS:-compute direct direct+fsync ckptfwd ckptfwd-started ckptfwd+fsync})
need=("$APP")
[[ " ${VARIANTS[*]} " == *" ckptfwd"* ]] && need+=("$LIB" "$CLI" "$BUILD/bin/ckptfwd-forwarder")
for f in "${need[@]}"; do
  [ -e "$f" ] || { echo "bench_demo.sh: $f is missing; run 'make' first" >&2; exit 2; }
done
for t in mpiexec.mpich gzip zstd awk; do
  command -v "$t" >/dev/null || { echo "bench_demo.sh: '$t' not found; run 'make deps'" >&2; exit 2; }
done

REPS=${BENCH_DEMO_REPS:-3}
NP=${BENCH_NP:-4}
STEPS=${BENCH_STEPS:-8}
EVERY=${BENCH_EVERY:-2}
read -r NX NY NZ <<<"${BENCH_SIZE:-64 64 64}"
rm -rf "$WORK" && mkdir -p "$WORK" || { echo "bench_demo.sh: cannot create $WORK" >&2; exit 2; }
STATS_FILE=$WORK/stats.jsonl
LOG=$WORK/ckptfwd.log
APP_CMD=(mpiexec.mpich -n "$NP" "$APP" --size "$NX" "$NY" "$NZ" --steps "$STEPS")

now() { date +%s.%N; }
fwd_lines() { cat "$STATS_FILE" 2>/dev/null | grep -c '"source" *: *"forwarder"'; }
# Value of a counter in the LAST forwarder line (flat JSON object, one per line).
last_stat() {
  grep '"source" *: *"forwarder"' "$STATS_FILE" 2>/dev/null | tail -n 1 |
    grep -o "\"$1\" *: *[0-9.eE+-]*" | sed 's/.*: *//'
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "") printf "%.2f", a / b; else printf "-" }'; }

# run VARIANT REP: runs one variant, appends "wall_s ckpt_write_s" to $WORK/VARIANT.times.
run_variant() {
  local v=$1 rep=$2 dir="$WORK/$1.$2" out t0 t1 extra=()
  mkdir -p "$dir"
  case $v in
    compute) extra=(--ckpt-every 0) ;;
    direct) extra=(--ckpt-every "$EVERY" --ckpt-dir "$dir") ;;
    direct+fsync) extra=(--ckpt-every "$EVERY" --ckpt-dir "$dir" --fsync) ;;
    ckptfwd | ckptfwd-started) extra=(--ckpt-every "$EVERY" --ckpt-dir "$dir") ;;
    ckptfwd+fsync) extra=(--ckpt-every "$EVERY" --ckpt-dir "$dir" --fsync) ;;
  esac
  local envs=()
  if [[ $v == ckptfwd* ]]; then
    envs=(LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$dir/*" CKPTFWD_STATS_FILE="$STATS_FILE"
          CKPTFWD_JOB_ID="bench-$$-$v-$rep" CKPTFWD_IDLE_EXIT=1 CKPTFWD_LOG="$LOG"
          CKPTFWD_SCHEMA="$SCHEMA")
  fi
  local before
  before=$(fwd_lines)
  if [[ $v == ckptfwd-started ]]; then
    # As a job script would; idle exit 3 s so it waits for the ranks' first checkpoint.
    env "${envs[@]:1}" CKPTFWD_IDLE_EXIT=3 "$BUILD/bin/ckptfwd-forwarder" --daemon || {
      echo "bench_demo.sh: ckptfwd-forwarder --daemon failed (see $LOG)" >&2; return 1; }
  fi
  sync
  t0=$(now)
  out=$(env "${envs[@]}" "${APP_CMD[@]}" "${extra[@]}" 2>&1) || {
    echo "bench_demo.sh: variant $v (round $rep) failed:" >&2; echo "$out" >&2; return 1; }
  t1=$(now)
  local w
  w=$(echo "$out" | grep -o 'ckpt_write_s=[0-9.]*' | cut -d= -f2)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b-a}') ${w:-0}" >>"$WORK/$v.times"
  if [[ $v == ckptfwd* ]]; then
    # Let this job's forwarder finish and leave (it appends its stats) before the next run,
    # so it does not compete for the CPUs; its idle time is not part of the measurement.
    local i
    for i in $(seq 1 80); do [ "$(fwd_lines)" -gt "$before" ] && break; sleep 0.25; done
    [ "$(fwd_lines)" -gt "$before" ] || echo "bench_demo.sh: no forwarder stats line after $v round $rep" >&2
    echo "$(last_stat bytes_captured) $(last_stat bytes_stored) $(last_stat files_captured) \
$(find "$dir/.ckptfwd" -type f 2>/dev/null | wc -l) $(last_stat time_compress_s) $(last_stat time_infer_s) \
$(last_stat files_mapped)" >>"$WORK/$v.store"
  fi
}

files=$(( (STEPS / EVERY) * NP ))
load() { awk '{print $1}' /proc/loadavg 2>/dev/null || echo "?"; }
LOAD0=$(load)
echo "ckptfwd bench: $NP ranks, ${NX}x${NY}x${NZ} float64 cells x 2 fields per rank, $files checkpoint files,"
echo "$REPS rounds of: ${VARIANTS[*]}  (work dir $WORK on $(df -T "$WORK" | awk 'NR==2{print $2}'))"
for rep in $(seq 1 "$REPS"); do
  for v in "${VARIANTS[@]}"; do
    run_variant "$v" "$rep" || exit 1
    printf '.'
  done
done
echo

# Compression baselines on the same files (from the first direct round), concatenated in
# step and rank order like mcrEngine's "concatenate then gzip" baseline.
mapfile -t CK < <(cd "$WORK/direct.1" && ls ckpt_*_r*.bin | sort -t_ -k2,2n -k3,3 | sed "s|^|$WORK/direct.1/|")
raw_bytes=$(cat "${CK[@]}" | wc -c)
t0=$(now); gz_bytes=$(cat "${CK[@]}" | gzip -6 | wc -c); t1=$(now)
gz_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
t0=$(now); zs_bytes=$(cat "${CK[@]}" | zstd -3 -T1 -q -c | wc -c); t1=$(now)
zs_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')

col() { awk -v c="$2" '{print $c}' "$WORK/$1.times" | median; }
scol() { awk -v c="$2" '{print $c}' "$WORK/$1.store" 2>/dev/null | median; }
c_wall=$(col compute 1)
d_wall=$(col direct 1); d_w=$(col direct 2)

echo
printf '%-34s %9s %9s %11s %11s %9s\n' "variant (median of $REPS)" "wall s" "wall/dir" "ckpt ovh s" "ovh/dir" "write s"
for v in "${VARIANTS[@]}"; do
  [ -s "$WORK/$v.times" ] || continue
  wall=$(col "$v" 1); w=$(col "$v" 2)
  ovh=$(awk -v a="$wall" -v b="$c_wall" 'BEGIN{printf "%.3f", a-b}')
  d_ovh=$(awk -v a="$d_wall" -v b="$c_wall" 'BEGIN{printf "%.3f", a-b}')
  if [ "$v" = compute ]; then ovh="-"; fi
  label=$v; [[ $v == ckptfwd* ]] && label="$v (incl. exit wait)"
  printf '%-34s %9.3f %9s %11s %11s %9.3f\n' "$label" "$wall" "$(ratio "$wall" "$d_wall")" "$ovh" \
    "$( [ "$v" = compute ] && echo - || ratio "$ovh" "$d_ovh")" "$w"
done
echo "  wall s: time until mpiexec returns; ckpt ovh: wall minus the compute-only run;"
echo "  write s: time the application spent inside its checkpoint writes (slowest rank)."

echo
printf '%-34s %12s %12s %8s %9s\n' "compression of the same $files files" "in bytes" "out bytes" "ratio" "time s"
for v in ckptfwd ckptfwd-started ckptfwd+fsync; do
  [ -s "$WORK/$v.store" ] || continue
  cap=$(scol "$v" 1); sto=$(scol "$v" 2); csec=$(scol "$v" 5)
  printf '%-34s %12s %12s %8s %9s\n' "$v store (scheme ${CKPTFWD_SCHEME:-auto})" \
    "${cap:-?}" "${sto:-?}" "$(ratio "${cap:-0}" "${sto:-0}")" "${csec:-?}"
done
printf '%-34s %12s %12s %8s %9s\n' "gzip -6 (concatenated)" "$raw_bytes" "$gz_bytes" "$(ratio "$raw_bytes" "$gz_bytes")" "$gz_s"
printf '%-34s %12s %12s %8s %9s\n' "zstd -3 -T1 (concatenated)" "$raw_bytes" "$zs_bytes" "$(ratio "$raw_bytes" "$zs_bytes")" "$zs_s"
echo "  ckptfwd: in = bytes captured (every captured file version), out = bytes stored, time = its"
echo "  compress time from the stats (in the background, overlapping the application)."
echo
echo "files: the application wrote $files checkpoint files per run (each as .tmp, then renamed)"
for v in ckptfwd ckptfwd-started ckptfwd+fsync; do
  [ -s "$WORK/$v.store" ] || continue
  echo "  $v: captured $(scol "$v" 3) file versions; the store holds $(scol "$v" 4) files (containers + MANIFEST);"
  echo "    $(scol "$v" 7) files mapped by the demo schema, $(scol "$v" 6) s inferring (beside $(scol "$v" 5) s compressing)"
done
echo "load average (other work on this machine): $LOAD0 at the start, $(load) at the end; $(nproc) cores"
echo "raw timings: $WORK/*.times, store figures: $WORK/*.store, forwarder stats: $STATS_FILE"

# The figures for bench.json (medians of the rounds); a figure missing is null.
nz() { echo "${1:-null}"; }
{
  printf '{"ranks":%d,"files":%d,"rounds":%d,"variants":[' "$NP" "$files" "$REPS"
  sep=""
  for v in "${VARIANTS[@]}"; do
    [ -s "$WORK/$v.times" ] || continue
    printf '%s{"variant":"%s","wall_s":%s,"ckpt_write_s":%s}' "$sep" "$v" "$(nz "$(col "$v" 1)")" "$(nz "$(col "$v" 2)")"
    sep=","
  done
  printf '],"compression":{"raw_bytes":%d,"gzip6_bytes":%d,"gzip6_s":%s,"zstd3_bytes":%d,"zstd3_s":%s' \
    "$raw_bytes" "$gz_bytes" "$gz_s" "$zs_bytes" "$zs_s"
  for v in ckptfwd ckptfwd-started ckptfwd+fsync; do
    [ -s "$WORK/$v.store" ] || continue
    printf ',"%s":{"bytes_captured":%s,"bytes_stored":%s,"compress_s":%s,"files_mapped":%s}' "$v" \
      "$(nz "$(scol "$v" 1)")" "$(nz "$(scol "$v" 2)")" "$(nz "$(scol "$v" 5)")" "$(nz "$(scol "$v" 7)")"
  done
  printf '}}\n'
} >"$OUT_JSON"
# The checkpoint files are no longer needed (the timings and store figures are).
rm -rf "$WORK"/*.[0-9]*
