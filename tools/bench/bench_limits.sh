#!/usr/bin/env bash
# make bench, part 1: ckptfwd against the physical limits of this node, side by side in ONE
# run (variants interleaved within each round, so they see the same machine).
#
#   tools/bench/bench_limits.sh BUILD WORK RAW
#
# Appends one JSON object per measurement to RAW (JSON lines; bench_report.py turns them
# into the table, bench.json and bench.svg). Sections:
#   uncaptured  ns per call on a file the library does not capture (open+read+close, stat,
#               relative open), bench_uncaptured with and without LD_PRELOAD
#   ckpt        a checkpoint of SIZE bytes in all from R MPI ranks (bench_ckpt_writer):
#                 tmpfs       written to /dev/shm (memory speed, nothing durable)
#                 disk_fsync  written to WORK on disk with fsync (the durable baseline)
#                 lib         under ckptfwd (app-visible time; mpiexec returns once committed)
#                 lib_fsync   under ckptfwd with fsync (returns when committed: durable)
#               each ckptfwd run with its forwarder's stats line, peak RSS, and the files
#               and bytes its store holds
#   read        the checkpoint read back and every byte checked: disk (the disk_fsync files)
#               and through the library in a NEW job after the forwarder committed and left
#   restore     ckptfwd restore STORE --to DIR, every byte checked by the writer's read
#               mode (first round; that round also checks the tmpfs files the same way, so
#               the restored files equal the bytes written without the library)
#   next        a job's checkpoint after its first (bench_ckpt_writer --next-after): the
#               same four variants, each job writing a checkpoint, then after a pause (the
#               computation between two; under ckptfwd without fsync long enough for the
#               first to be committed) the next step's into DIR/next/, whose times are
#               recorded (next_*); under ckptfwd both are then read back in a new job,
#               every byte checked. BENCH_NEXT_SIZES ("64M 512M"), BENCH_NEXT_RANKS ("1 4")
#   fsync1      one 64 MiB file written and fsynced, on disk and under ckptfwd
#   small       10,000 files of 4 KiB written and read back (new job), disk and ckptfwd
# Page cache: before each read it is dropped (echo 3 > /proc/sys/vm/drop_caches) when this
# process may; the records say "cold":1 if it was, else both reads are warm ("cold":0).
# Settings (environment): BENCH_SIZES (default "64M 512M 2G"), BENCH_RANKS ("1 2 4"),
# BENCH_REPS (2), BENCH_SMALL_FILES (10000), BENCH_UNCAPTURED_ITERS (200000),
# BENCH_UNCAPTURED_PAIRS (4 runs without and with the library, interleaved, a round),
# BENCH_QUICK=1 (defaults "64M 256M", "1 4", 1, 2000, 50000, 1), and CKPTFWD_* for the
# ckptfwd runs.
# BENCH_PARTS ("uncaptured fsync1 ckpt next small"): the sections to run.
# BENCH_STORE_MBPS (unset: no limit): run every part inside a block-I/O cgroup that limits
# reads and writes to WORK's disk to this many MB/s (cgroup v2 io.max, else v1
# blkio.throttle; needs root), as a node's share of a parallel file system: the direct
# baselines and the forwarder's container writes and restart reads all go through it.
# Every record then carries "store_mbps". Exit 3 when the limit cannot be set.
# Any byte that does not come back exactly fails the run (exit 1); no time is asserted.
set -uo pipefail

BUILD=$1 WORK=$2 RAW=$3
BIN=$BUILD/bin
LIB=$BUILD/lib/libckptfwd.so
HERE=$(cd "$(dirname "$0")" && pwd)
SCHEMA=$HERE/bench_ckpt.schema
for f in "$LIB" "$BIN/ckptfwd" "$BIN/ckptfwd-forwarder" "$BIN/bench_ckpt_writer" \
  "$BIN/bench_uncaptured" "$BIN/bench_fsync" "$BIN/bench_smallfiles"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "bench_limits: $f is missing; run 'make' first" >&2; exit 2; }
done

if [ "${BENCH_QUICK:-0}" = 1 ]; then
  SIZES=${BENCH_SIZES:-64M 256M} RANKS=${BENCH_RANKS:-1 4} REPS=${BENCH_REPS:-1}
  SMALL=${BENCH_SMALL_FILES:-2000} ITERS=${BENCH_UNCAPTURED_ITERS:-50000}
  UNCAP_PAIRS=${BENCH_UNCAPTURED_PAIRS:-1}
  NEXT_SIZES=${BENCH_NEXT_SIZES:-64M} NEXT_RANKS=${BENCH_NEXT_RANKS:-1 4}
else
  SIZES=${BENCH_SIZES:-64M 512M 2G} RANKS=${BENCH_RANKS:-1 2 4} REPS=${BENCH_REPS:-2}
  SMALL=${BENCH_SMALL_FILES:-10000} ITERS=${BENCH_UNCAPTURED_ITERS:-200000}
  UNCAP_PAIRS=${BENCH_UNCAPTURED_PAIRS:-4}
  NEXT_SIZES=${BENCH_NEXT_SIZES:-64M 512M} NEXT_RANKS=${BENCH_NEXT_RANKS:-1 4}
fi
FSYNC1=${BENCH_FSYNC_BYTES:-64M}
PARTS=${BENCH_PARTS:-uncaptured fsync1 ckpt next small}
SHM=/dev/shm/ckptfwd-bench-$$
mkdir -p "$WORK/stats" "$SHM" || exit 2
WORK=$(cd "$WORK" && pwd)
STORE_MBPS=${BENCH_STORE_MBPS:-}
CGROUP=
trap 'rm -rf "$SHM"; unlimit_store' EXIT
LOG=$WORK/ckptfwd.log
RUN=0

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.6f", b-a}'; }
# "a=1 b=x" -> "\"a\":1,\"b\":\"x\"" (numbers bare, anything else quoted).
kv_json() {
  awk '{ sep = ""
         for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = substr($i, length(k) + 2);
           if (k == "ranks") continue;  # the record names the ranks already
           if (v != "null" && v !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) v = "\"" v "\"";
           printf "%s\"%s\":%s", sep, k, v; sep = "," } }' <<<"$1"
}
rec() { echo "{$1${STORE_MBPS:+,\"store_mbps\":$STORE_MBPS}}" >>"$RAW"; }
has_part() { [[ " $PARTS " == *" $1 "* ]]; }

# --- a store of limited bandwidth (BENCH_STORE_MBPS) -------------------------------------------
# MAJ:MIN of the device under DIR: the disk of a partition (a throttle rule names a disk,
# not a partition), else the device itself (a disk, or a device-mapper volume, whose
# I/O the rule on it limits).
disk_of() {
  local src pk
  src=$(findmnt -no SOURCE --target "$1" 2>/dev/null | head -n 1)
  [[ $src == /dev/* ]] || return 1
  if [ "$(lsblk -dno TYPE "$src" 2>/dev/null)" = part ]; then
    pk=$(lsblk -no PKNAME "$src" 2>/dev/null | head -n 1)
    [ -n "$pk" ] && src=/dev/$pk
  fi
  lsblk -dno MAJ:MIN "$src" 2>/dev/null | tr -d ' '
}
# Moves this script (and so every process it starts) into a new cgroup whose reads and
# writes to WORK's disk are limited to STORE_MBPS MB/s.
limit_store() {
  local dev bps=$((STORE_MBPS * 1000000)) root
  dev=$(disk_of "$WORK") && [ -n "$dev" ] || {
    echo "bench_limits: BENCH_STORE_MBPS: $WORK is not on a block device" >&2; return 1; }
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    root=/sys/fs/cgroup
    grep -qw io "$root/cgroup.controllers" || {
      echo "bench_limits: BENCH_STORE_MBPS: the io controller is not available" >&2; return 1; }
    echo +io 2>/dev/null >"$root/cgroup.subtree_control"
    CGROUP=$root/ckptfwd-bench-$$
    mkdir "$CGROUP" 2>/dev/null && echo "$dev rbps=$bps wbps=$bps" 2>/dev/null >"$CGROUP/io.max"
  elif [ -d /sys/fs/cgroup/blkio ]; then
    CGROUP=/sys/fs/cgroup/blkio/ckptfwd-bench-$$
    mkdir "$CGROUP" 2>/dev/null &&
      echo "$dev $bps" 2>/dev/null >"$CGROUP/blkio.throttle.read_bps_device" &&
      echo "$dev $bps" 2>/dev/null >"$CGROUP/blkio.throttle.write_bps_device"
  else
    false
  fi && echo $$ 2>/dev/null >"$CGROUP/cgroup.procs" || {
    echo "bench_limits: BENCH_STORE_MBPS: cannot set a block-I/O limit (needs root and a cgroup" \
      "with the io or blkio controller)" >&2
    unlimit_store
    return 1
  }
}
# Leaves the cgroup and removes it once the last forwarder in it has exited.
unlimit_store() {
  [ -n "$CGROUP" ] || return 0
  echo $$ 2>/dev/null >"$(dirname "$CGROUP")/cgroup.procs"
  local i
  for ((i = 0; i < 100; i++)); do
    rmdir "$CGROUP" 2>/dev/null && break
    sleep 0.1
  done
  CGROUP=
}
COLD=0
drop_caches() {
  sync
  if echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then COLD=1; else COLD=0; fi
}
bytes_of() {  # 64M -> 67108864
  awk -v s="$1" 'BEGIN{ n = s + 0; u = substr(s, length(s));
    if (u == "K") n *= 1024; else if (u == "M") n *= 1048576; else if (u == "G") n *= 1073741824;
    printf "%d", n }'
}

# The environment of a ckptfwd job: capture DIR/*, store STORE, stats to STATS.
lib_env() {  # DIR STORE STATS JOB
  echo LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$1/*" CKPTFWD_STORE="$2" CKPTFWD_STATS_FILE="$3" \
    CKPTFWD_JOB_ID="$4" CKPTFWD_IDLE_EXIT=1 CKPTFWD_LOG="$LOG" \
    CKPTFWD_SCHEMA="$SCHEMA"
}
# The forwarder of job JOB: the ckptfwd-forwarder process (its name is cut to 15 characters)
# whose environment names the job.
forwarder_pid() {
  local p
  for p in $(pgrep -x ckptfwd-forward 2>/dev/null); do
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "CKPTFWD_JOB_ID=$1" && { echo "$p"; return; }
  done
}
# Samples the forwarder's VmHWM (its peak RSS) until it exits; max in bytes to FILE. For
# forwarders that do not report peak_rss_bytes in their stats. VmHWM only grows, and the
# forwarder stays at least its idle time (1 s) after the job, so the last sample is its peak.
sample_rss() {  # JOB FILE
  local pid="" key val unit max=0 i
  for ((i = 0; i < 6000; i++)); do
    [ -n "$pid" ] || pid=$(forwarder_pid "$1")
    if [ -n "$pid" ]; then
      [ -r "/proc/$pid/status" ] || break
      while read -r key val unit; do
        [ "$key" = "VmHWM:" ] && [ $((val * 1024)) -gt "$max" ] && max=$((val * 1024)) && echo "$max" >"$2"
      done 2>/dev/null <"/proc/$pid/status"
    fi
    sleep 0.05
  done
}
# Waits until STATS has the forwarder's line (it writes it when it exits), then prints it.
forwarder_stats() {  # STATS
  local i
  for i in $(seq 1 600); do
    grep -q '"source" *: *"forwarder"' "$1" 2>/dev/null && break
    sleep 0.1
  done
  grep '"source" *: *"forwarder"' "$1" 2>/dev/null | tail -n 1
}

# One ckptfwd job: runs CMD... under the library of a new job (capture DIR, store STORE),
# waits for its forwarder to exit. Sets OUT (CMD's stdout), WALL (launch to return), STATS
# (forwarder line or {}), RSS (peak bytes: stats field, else sampled, else 0).
lib_job() {  # DIR STORE CMD...
  local dir=$1 store=$2 t0 t1 job sfile rfile
  shift 2
  RUN=$((RUN + 1))
  job=bench-$$-$RUN sfile=$WORK/stats/$RUN.jsonl rfile=$WORK/stats/$RUN.rss
  rm -f "$sfile" "$rfile"
  sample_rss "$job" "$rfile" &
  local sampler=$!
  t0=$(now)
  # shellcheck disable=SC2046  # lib_env's words are KEY=VALUE without spaces in BUILD/WORK
  OUT=$(env $(lib_env "$dir" "$store" "$sfile" "$job") "$@") || {
    kill "$sampler" 2>/dev/null
    echo "bench_limits: under ckptfwd: $* failed; log $LOG" >&2; return 1; }
  t1=$(now)
  WALL=$(elapsed "$t0" "$t1")
  # From the writer's first barrier when it says when that was (start_epoch=).
  local s0
  s0=$(grep -o 'start_epoch=[0-9.]*' <<<"$OUT" | cut -d= -f2)
  [ -n "$s0" ] && WALL=$(elapsed "$s0" "$t1")
  STATS=$(forwarder_stats "$sfile")
  [ -n "$STATS" ] || { echo "bench_limits: no forwarder stats after: $* (log $LOG)" >&2; STATS="{}"; }
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  RSS=$(grep -o '"peak_rss_bytes" *: *[0-9]*' <<<"$STATS" | grep -o '[0-9]*$')
  RSS_FROM=stats
  # null: neither the stats field nor a sample (the forwarder came and went unseen).
  [ -n "$RSS" ] || { RSS=$(cat "$rfile" 2>/dev/null || echo null); RSS_FROM=vmhwm; }
  rm -f "$rfile"
}
store_counts() {  # STORE -> "store_files=N store_bytes=B"
  echo "store_files=$(find "$1" -type f | wc -l) store_bytes=$(find "$1" -type f -printf '%s\n' | awk '{s+=$1} END{print s+0}')"
}

writer() { mpiexec.mpich -n "$1" "$BIN/bench_ckpt_writer" "${@:2}"; }

# --- one checkpoint round: SIZE_LABEL RANKS REP ----------------------------------------------
ckpt_round() {
  local label=$1 np=$2 rep=$3 bytes out dir store base
  bytes=$(bytes_of "$label")
  base="\"size\":$bytes,\"size_label\":\"$label\",\"ranks\":$np,\"rep\":$rep"
  local tmpfs=$SHM/tmpfs direct=$WORK/direct cdir=$WORK/ckpt
  rm -rf "$tmpfs" "$direct" "$cdir" "$WORK"/store.*
  mkdir -p "$tmpfs" "$direct" "$cdir"

  out=$(writer "$np" --mode write --dir "$tmpfs" --bytes "$label") || return 1
  rec "\"sec\":\"ckpt\",\"variant\":\"tmpfs\",$base,$(kv_json "$out")"
  # The bytes written without the library are the oracle for the restore below: the
  # writer's read mode checks them against its generator, which then stands for them, and
  # they go now. Kept, they held the checkpoint's size of memory through the later
  # variants, whose pages were then the ones the host had not backed yet (here a 2 GiB
  # write under ckptfwd took 1.5-2.9 s beside them, 0.39 s without them).
  if [ "$rep" = 1 ]; then
    writer "$np" --mode read --dir "$tmpfs" --bytes "$label" >/dev/null || {
      echo "bench_limits: the writer's generator does not give back its own tmpfs files ($label x $np)" >&2
      return 1; }
  fi
  rm -rf "$tmpfs"

  out=$(writer "$np" --mode write --dir "$direct" --bytes "$label" --fsync) || return 1
  rec "\"sec\":\"ckpt\",\"variant\":\"disk_fsync\",$base,$(kv_json "$out")"
  drop_caches
  out=$(writer "$np" --mode read --dir "$direct" --bytes "$label") || {
    echo "bench_limits: direct read-back of $label x $np ranks differs" >&2; return 1; }
  rec "\"sec\":\"read\",\"variant\":\"disk\",$base,\"cold\":$COLD,$(kv_json "$out")"
  rm -rf "$direct"

  local v fs
  for v in lib lib_fsync; do
    store=$WORK/store.$v
    fs=(); [ "$v" = lib_fsync ] && fs=(--fsync)
    rm -rf "$cdir" "$store" && mkdir -p "$cdir"
    lib_job "$cdir" "$store" mpiexec.mpich -n "$np" "$BIN/bench_ckpt_writer" --mode write \
      --dir "$cdir" --bytes "$label" "${fs[@]}" || return 1
    rec "\"sec\":\"ckpt\",\"variant\":\"$v\",$base,\"until_committed_s\":$WALL,$(kv_json "$OUT $(store_counts "$store") peak_rss_bytes=$RSS rss_from=$RSS_FROM"),\"stats\":$STATS"
    # Restart: a new job reads the checkpoint back through the library, every byte checked.
    drop_caches
    lib_job "$cdir" "$store" mpiexec.mpich -n "$np" "$BIN/bench_ckpt_writer" --mode read \
      --dir "$cdir" --bytes "$label" || {
      echo "bench_limits: read-back through ckptfwd of $label x $np ranks ($v) differs" >&2; return 1; }
    rec "\"sec\":\"read\",\"variant\":\"$v\",$base,\"cold\":$COLD,$(kv_json "$OUT"),\"stats\":$STATS"
    if [ "$rep" = 1 ] && [ "$v" = lib ]; then
      local rdir=$WORK/restored t0 t1 ok=1
      rm -rf "$rdir"
      t0=$(now)
      "$BIN/ckptfwd" restore "$store" --to "$rdir" >/dev/null 2>"$WORK/restore.err" || ok=0
      t1=$(now)
      writer "$np" --mode read --dir "$rdir" --bytes "$label" >/dev/null 2>>"$WORK/restore.err" || ok=0
      rec "\"sec\":\"restore\",$base,\"variant\":\"$v\",\"byte_exact\":$ok,\"seconds\":$(elapsed "$t0" "$t1")"
      rm -rf "$rdir"
      [ "$ok" = 1 ] || { echo "bench_limits: ckptfwd restore of $label x $np ranks is not byte-exact (see $WORK/restore.err)" >&2; return 1; }
    fi
    rm -rf "$store" "$cdir"
  done
}

# --- a job's next checkpoint: SIZE_LABEL RANKS REP ----------------------------------------------
# The pause before it: the baselines and the fsync'd run have nothing left to do (0.2 s);
# without fsync the first checkpoint, the first wave of its series, is sealed a wave window
# (CKPTFWD_WAVE_WINDOW_MS, 3 s) after its last close, then committed: the next one is
# written once the forwarder is idle again, as in a job that checkpoints every few minutes.
next_round() {
  local label=$1 np=$2 rep=$3 bytes out base v fs gap store
  bytes=$(bytes_of "$label")
  base="\"size\":$bytes,\"size_label\":\"$label\",\"ranks\":$np,\"rep\":$rep"
  local tmpfs=$SHM/next direct=$WORK/direct cdir=$WORK/ckpt
  rm -rf "$tmpfs" "$direct" "$cdir" && mkdir -p "$tmpfs" "$direct"
  out=$(writer "$np" --mode write --dir "$tmpfs" --bytes "$label" --next-after 0.2) || return 1
  rec "\"sec\":\"next\",\"variant\":\"tmpfs\",$base,$(kv_json "$out")"
  rm -rf "$tmpfs"
  out=$(writer "$np" --mode write --dir "$direct" --bytes "$label" --fsync --next-after 0.2) || return 1
  rec "\"sec\":\"next\",\"variant\":\"disk_fsync\",$base,$(kv_json "$out")"
  rm -rf "$direct"
  for v in lib lib_fsync; do
    store=$WORK/store.$v
    fs=() gap=0.2
    if [ "$v" = lib_fsync ]; then fs=(--fsync); else
      gap=$(awk -v b="$bytes" -v w="${CKPTFWD_WAVE_WINDOW_MS:-3000}" 'BEGIN{printf "%.1f", w / 1000 + 0.5 + b / 1073741824}')
    fi
    rm -rf "$cdir" "$store" && mkdir -p "$cdir"
    lib_job "$cdir" "$store" mpiexec.mpich -n "$np" "$BIN/bench_ckpt_writer" --mode write \
      --dir "$cdir" --bytes "$label" --next-after "$gap" "${fs[@]}" || return 1
    rec "\"sec\":\"next\",\"variant\":\"$v\",$base,\"pause_s\":$gap,$(kv_json "$OUT"),\"stats\":$STATS"
    # Both checkpoints come back exactly, in a new job.
    lib_job "$cdir" "$store" mpiexec.mpich -n "$np" "$BIN/bench_ckpt_writer" --mode read \
      --dir "$cdir/next" --bytes "$label" --step 1 || {
      echo "bench_limits: read-back through ckptfwd of the next checkpoint, $label x $np ranks ($v), differs" >&2; return 1; }
    rec "\"sec\":\"read\",\"variant\":\"next_$v\",$base,$(kv_json "$OUT")"
    lib_job "$cdir" "$store" mpiexec.mpich -n "$np" "$BIN/bench_ckpt_writer" --mode read \
      --dir "$cdir" --bytes "$label" || {
      echo "bench_limits: read-back through ckptfwd of the first checkpoint, $label x $np ranks ($v, a next one written), differs" >&2; return 1; }
    rm -rf "$store" "$cdir"
  done
}

# --- uncaptured calls, fsync of one file, small files ----------------------------------------
# A pair differs by tens of ns on calls of a few hundred: UNCAP_PAIRS interleaved pairs
# a round, so that the medians are not one run's noise.
uncaptured_round() {
  local rep=$1 d=$WORK/uncap out line pair with
  mkdir -p "$d"
  for ((pair = 0; pair < UNCAP_PAIRS; pair++)); do for with in 0 1; do
    if [ "$with" = 1 ]; then
      # The library is loaded and initialised but captures nothing in $d.
      out=$(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$WORK/nothing-here/*" CKPTFWD_JOB_ID="bench-$$-uncap" \
        CKPTFWD_LOG="$LOG" "$BIN/bench_uncaptured" --iterations "$ITERS" --dir "$d") || return 1
    else
      out=$("$BIN/bench_uncaptured" --iterations "$ITERS" --dir "$d") || return 1
    fi
    while read -r line; do
      [ -n "$line" ] && rec "\"sec\":\"uncaptured\",\"rep\":$rep,\"with_lib\":$with,$(kv_json "$line")"
    done <<<"$out"
  done; done
  rm -rf "$d"
}

fsync1_round() {
  local rep=$1 d=$WORK/fsync1 out
  rm -rf "$d" "$WORK/store.fsync1" && mkdir -p "$d"
  out=$("$BIN/bench_fsync" --path "$d/one.bin" --mib "$(( $(bytes_of "$FSYNC1") >> 20 ))") || return 1
  rec "\"sec\":\"fsync1\",\"variant\":\"disk\",\"rep\":$rep,\"bytes\":$(bytes_of "$FSYNC1"),$(kv_json "$out")"
  rm -rf "$d" && mkdir -p "$d"
  lib_job "$d" "$WORK/store.fsync1" "$BIN/bench_fsync" --path "$d/one.bin" --mib "$(( $(bytes_of "$FSYNC1") >> 20 ))" || return 1
  rec "\"sec\":\"fsync1\",\"variant\":\"lib\",\"rep\":$rep,\"bytes\":$(bytes_of "$FSYNC1"),$(kv_json "$OUT")"
  rm -rf "$d" "$WORK/store.fsync1"
}

small_round() {
  local rep=$1 d=$WORK/small store=$WORK/store.small out base
  base="\"rep\":$rep"
  rm -rf "$d" "$store" && mkdir -p "$d"
  out=$("$BIN/bench_smallfiles" write --dir "$d" --files "$SMALL") || return 1
  rec "\"sec\":\"small\",\"variant\":\"disk_write\",$base,$(kv_json "$out")"
  drop_caches
  out=$("$BIN/bench_smallfiles" read --dir "$d" --files "$SMALL") || {
    echo "bench_limits: small files read back directly differ" >&2; return 1; }
  rec "\"sec\":\"small\",\"variant\":\"disk_read\",$base,\"cold\":$COLD,$(kv_json "$out")"
  rm -rf "$d" && mkdir -p "$d"
  lib_job "$d" "$store" "$BIN/bench_smallfiles" write --dir "$d" --files "$SMALL" || return 1
  rec "\"sec\":\"small\",\"variant\":\"lib_write\",$base,\"until_committed_s\":$WALL,$(kv_json "$OUT $(store_counts "$store")"),\"stats\":$STATS"
  drop_caches
  lib_job "$d" "$store" "$BIN/bench_smallfiles" read --dir "$d" --files "$SMALL" || {
    echo "bench_limits: small files read back through ckptfwd differ" >&2; return 1; }
  rec "\"sec\":\"small\",\"variant\":\"lib_read\",$base,\"cold\":$COLD,$(kv_json "$OUT"),\"stats\":$STATS"
  rm -rf "$d" "$store"
}

if [ -n "$STORE_MBPS" ]; then
  [[ $STORE_MBPS =~ ^[1-9][0-9]*$ ]] || { echo "bench_limits: BENCH_STORE_MBPS='$STORE_MBPS' is not a whole number of MB/s" >&2; exit 2; }
  limit_store || exit 3
fi
# ROUND "SIZES" "RANKS" REP MARK: ROUND SIZE RANKS REP for each pair, MARK after each.
each_size_and_ranks() {
  local label np
  for label in $2; do
    for np in $3; do
      "$1" "$label" "$np" "$4" || return 1
      printf '%s' "$5"
    done
  done
}
echo "limits: parts [$PARTS], sizes [$SIZES], ranks [$RANKS], $REPS round(s), $SMALL small files; work dir $WORK ($(df -T "$WORK" | awk 'NR==2{print $2}'))${STORE_MBPS:+ limited to $STORE_MBPS MB/s}, tmpfs $SHM"
for rep in $(seq 1 "$REPS"); do
  if has_part uncaptured; then uncaptured_round "$rep" || exit 1; printf 'u'; fi
  if has_part fsync1; then fsync1_round "$rep" || exit 1; printf 'f'; fi
  if has_part ckpt; then each_size_and_ranks ckpt_round "$SIZES" "$RANKS" "$rep" . || exit 1; fi
  if has_part next; then each_size_and_ranks next_round "$NEXT_SIZES" "$NEXT_RANKS" "$rep" n || exit 1; fi
  if has_part small; then small_round "$rep" || exit 1; printf 's'; fi
done
echo
