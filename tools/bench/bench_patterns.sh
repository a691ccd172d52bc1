#!/usr/bin/env bash
# Write patterns (make bench, section j): one checkpoint file of BENCH_PATTERN_SIZE bytes
# (64 MiB) written by a plain (non-MPI) process in each pattern of bench_patterns (write,
# scattered pwrite, fwrite, writev, append reopen, ofstream, temp-and-rename, mmap,
# O_DIRECT, copy_file_range), one process per pattern, in interleaved rounds:
#   tmpfs         directly to /dev/shm (no fsync: it means nothing there)
#   disk          directly to the store's disk, without and with fsync
#   running       under the library with a forwarder started beforehand for the job
#                 (ckptfwd-forwarder --daemon), without and with fsync
#   started       under the library, each process a new job: its library starts the
#                 forwarder at the process's start (early start), without and with fsync
# The time is the pattern's calls (bench_patterns: first open to last close or rename, the
# fsync included), not the process's start or exit wait. Then the write, and a compute
# step on the forwarder's core, beside a forwarder busy compressing (see below). Then many
# small files from a
# Python script (BENCH_SMALL_PY: "2000 10000" files of 4 KiB): written and read back in the
# same process, directly and under the library, and read back by a new process (a new
# job: from the store) against a direct read with a warm and with a cold page cache; and
# the calls of a small file one by one (bench_calls) against a local socket's round trip,
# and what loading the library costs a process's start, with and without a forwarder.
# Every file is read back and checked by its writer; the library's files are restored
# from the stores afterwards and compared with the direct ones.
# usage: tools/bench/bench_patterns.sh BUILD WORK OUT.json   (BENCH_QUICK=1: one round,
# 16 MiB files, 2,000 small files only; BENCH_PATTERN_SIZE, BENCH_BUSY_FILES (4) and
# BENCH_SMALL_PY set the sizes; BENCH_PATTERNS: the patterns to run (names as
# `bench_patterns --list` gives them, all by default; the rounds of patterns only);
# BENCH_WARM=1: in those rounds each process writes its bytes once to a scratch file
# outside the capture before the clock starts, as a later checkpoint from the arrays of a
# long-lived process (bench_patterns --warm; the busy write beside is not warmed);
# BENCH_BUSY_ONLY=1: only the write and the compute step
# beside a busy forwarder, the write with BENCH_BUSY_ROUNDS rounds (15 by default: some
# rounds meet the disk's writeback or another process and take 2-4x, so 7 rounds moved the
# median by 30 %), the compute step with BENCH_COMPUTE_ROUNDS (7; BENCH_COMPUTE_M: its
# size); BENCH_SMALL_ONLY=1: only the small files and the calls of one)
set -uo pipefail
BUILD=$1 WORK=$2 OUT=$3
BP=$BUILD/bin/bench_patterns BC=$BUILD/bin/bench_calls LIB=$BUILD/lib/libckptfwd.so CLI=$BUILD/bin/ckptfwd
FWD=$BUILD/bin/ckptfwd-forwarder PY=/usr/bin/python3
[[ -x $BP && -x $BC && -e $LIB && -x $FWD ]] || { echo "bench_patterns.sh: build $BUILD first" >&2; exit 2; }
QUICK=${BENCH_QUICK:-0}
ROUNDS=$([[ $QUICK == 1 ]] && echo 1 || echo 3)
SIZE=${BENCH_PATTERN_SIZE:-$([[ $QUICK == 1 ]] && echo 16777216 || echo 67108864)}
SMALL=${BENCH_SMALL_PY:-$([[ $QUICK == 1 ]] && echo 2000 || echo "2000 10000")}
BUSY_ONLY=${BENCH_BUSY_ONLY:-0}  # 1: only the write beside a busy forwarder
SMALL_ONLY=${BENCH_SMALL_ONLY:-0}  # 1: only the small files and their calls
WARM=${BENCH_WARM:-0}  # 1: each pattern's process writes its bytes once before (--warm)
SHM=$(mktemp -d /dev/shm/ckf-bench-patterns.XXXXXX) || exit 2
rm -rf "$WORK" && mkdir -p "$WORK" || exit 2
WORK=$(cd "$WORK" && pwd)
RAW=$WORK/raw.txt
: >"$RAW"
running_pid= nogate_pid= compute_pids=
cleanup() {
  [[ -n $running_pid ]] && kill -TERM "$running_pid" 2>/dev/null
  [[ -n $nogate_pid ]] && kill -TERM "$nogate_pid" 2>/dev/null
  [[ -n $compute_pids ]] && kill -TERM $compute_pids 2>/dev/null
  rm -rf "$SHM"
}
trap cleanup EXIT
PATTERNS=${BENCH_PATTERNS:-$("$BP" --list | cut -f1)}
mkdir -p "$SHM/tmpfs" "$WORK/disk" "$WORK/running" "$WORK/started"
export CKPTFWD_LOG=$WORK/ckptfwd.log

# forwarder_of JOB: the pid of the forwarder of job JOB (nothing when there is none).
forwarder_of() {
  local p
  for p in $(pgrep -f ckptfwd-forwarder); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "CKPTFWD_JOB_ID=$1" && echo "$p"
  done
}

# The running forwarder: one job for every "running" process.
RUN_JOB=bp-running-$$
env CKPTFWD_CAPTURE="$WORK/running/*" CKPTFWD_JOB_ID=$RUN_JOB CKPTFWD_IDLE_EXIT=3600 \
  "$FWD" --daemon || { echo "bench_patterns.sh: the forwarder did not start" >&2; exit 1; }
running_pid=$(forwarder_of "$RUN_JOB")
[[ -n $running_pid ]] || { echo "bench_patterns.sh: the started forwarder is not found" >&2; exit 1; }

# one VARIANT PATTERN FSYNC: one process, its line into RAW.
n=0
one() {
  local variant=$1 p=$2 fs=$3 dir src line
  local -a pre=(env) args=()
  [[ $fs == 1 ]] && args+=(--fsync)
  [[ $WARM == 1 ]] && args+=(--warm "$SHM/warm.scratch")
  case $variant in
    tmpfs) dir=$SHM/tmpfs src=$SHM/source.dat ;;
    disk) dir=$WORK/disk src=$WORK/source.dat ;;
    running)
      dir=$WORK/running src=$WORK/source.dat
      pre=(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$dir/*" CKPTFWD_JOB_ID=$RUN_JOB) ;;
    started)
      dir=$WORK/started src=$WORK/source.dat n=$((n + 1))
      pre=(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$dir/*" CKPTFWD_JOB_ID=bp-started-$$-$n
        CKPTFWD_IDLE_EXIT=1) ;;
  esac
  line=$("${pre[@]}" "$BP" --dir "$dir" --pattern "$p" --size "$SIZE" --source "$src" "${args[@]}") ||
    { echo "bench_patterns.sh: $variant $p (fsync $fs) failed: $line" >&2; exit 1; }
  echo "$variant $fs $p $r ${line#* }" >>"$RAW"
}
for ((r = 0; r < ROUNDS * !BUSY_ONLY * !SMALL_ONLY; r++)); do
  for p in $PATTERNS; do
    one tmpfs "$p" 0
    for fs in 0 1; do
      for variant in disk running started; do one "$variant" "$p" "$fs"; done
    done
  done
done

# The application's write beside a busy forwarder: the `write` pattern through the running
# forwarder once it is busy compressing BUSY_FILES files of as many bytes of noisy float64
# another process closed just before (other values in each: not deduplicated; the process
# does not wait for their commit: CKPTFWD_EXIT_WAIT=0), against the same write with it
# idle; and the same busy write through a second forwarder that does not give way to the
# application's writes (CKPTFWD_YIELD_MS=0), as every forwarder did before. Each round
# begins with a sync (below).
drain_job() { CKPTFWD_JOB_ID=$1 timeout 300 "$CLI" drain >/dev/null 2>&1; }
if [[ $SMALL_ONLY != 1 ]]; then  # (to the matching fi: the busy write)
BUSY_FILES=${BENCH_BUSY_FILES:-4}  # BENCH_BUSY_ROUNDS: its rounds
"$PY" - "$SHM/noisy.dat" "$SIZE" <<'EOF' || { echo "bench_patterns.sh: cannot make the busy data (numpy)" >&2; exit 1; }
import numpy as np, sys
n = int(sys.argv[2]) >> 3
x = np.linspace(0, 60, n)
(np.sin(x) * 300 + np.random.default_rng(1).normal(0, 1e-3, n)).astype(np.float64).tofile(sys.argv[1])
EOF
NOGATE_JOB=bp-nogate-$$
mkdir -p "$WORK/running/busy" "$WORK/nogate/busy"
env CKPTFWD_CAPTURE="$WORK/nogate/*" CKPTFWD_JOB_ID=$NOGATE_JOB CKPTFWD_IDLE_EXIT=3600 CKPTFWD_YIELD_MS=0 \
  "$FWD" --daemon || { echo "bench_patterns.sh: the second forwarder did not start" >&2; exit 1; }
nogate_pid=$(forwarder_of "$NOGATE_JOB")
[[ -n $nogate_pid ]] || { echo "bench_patterns.sh: the second forwarder is not found" >&2; exit 1; }
# close_busy_files CAPTURED DIR ROUND JOB [CMD...]: one process under the library (capturing
# CAPTURED/*, run through CMD..., e.g. taskset) writes BUSY_FILES files of noisy float64
# into DIR, other values in every file and round (the same bytes again would only be
# referenced), and does not wait for their commit (CKPTFWD_EXIT_WAIT=0).
close_busy_files() {
  local captured=$1 dir=$2 r=$3 job=$4
  shift 4
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$captured/*" CKPTFWD_JOB_ID=$job CKPTFWD_EXIT_WAIT=0 \
    "$@" "$PY" - "$SHM/noisy.dat" "$dir" "$r" "$BUSY_FILES" <<'EOF'
import numpy as np, sys
base, r = np.fromfile(sys.argv[1]), int(sys.argv[3])
for i in range(int(sys.argv[4])):
    (base + (r * 64 + i + 1) * 1e-6).tofile(f"{sys.argv[2]}/f{r}-{i}.dat")
EOF
}
# await_busy PID: returns once PID burns CPU (3 ticks of 10 ms in 50 ms: it compresses the
# files just closed, after its batch window or a wave window), false after 6 s.
await_busy() {
  local a b i
  for ((i = 0; i < 120; i++)); do
    a=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null) || return 1
    sleep 0.05
    b=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null) || return 1
    ((b - a >= 3)) && return 0
  done
  return 1
}
BUSY_ROUNDS=${BENCH_BUSY_ROUNDS:-$([[ $QUICK == 1 ]] && echo 1 || echo 15)}
for ((r = 0; r < BUSY_ROUNDS; r++)); do
  for state in idle busy nogate; do
    drain_job "$RUN_JOB"
    drain_job "$NOGATE_JOB"
    # The disk's writeback of what the rounds before wrote (GBs of direct writes without
    # fsync) runs on these cores too, and not in every round alike: done before each.
    sync
    job=$RUN_JOB dir=$WORK/running pid=$running_pid
    [[ $state == nogate ]] && job=$NOGATE_JOB dir=$WORK/nogate pid=$nogate_pid
    if [[ $state != idle ]]; then
      close_busy_files "$dir" "$dir/busy" "$r" "$job" || exit 1
      await_busy "$pid" || echo "bench_patterns.sh: the forwarder never got busy" >&2
    fi
    line=$(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$dir/*" CKPTFWD_JOB_ID=$job \
      "$BP" --dir "$dir" --pattern write --size "$SIZE") ||
      { echo "bench_patterns.sh: the write beside a $state forwarder failed" >&2; exit 1; }
    echo "beside-$state 0 write $r ${line#* }" >>"$RAW"
  done
done
drain_job "$RUN_JOB"
drain_job "$NOGATE_JOB"
kill -TERM "$nogate_pid" 2>/dev/null
nogate_pid=

# The application's compute beside a busy forwarder, on one core (a node whose cores all
# run ranks): bench_patterns --compute (no I/O) with a forwarder idle and busy compressing
# BUSY_FILES files closed just before, each forwarder and process pinned to one CPU. Two
# forwarders: one started from this script as the library starts one (in the caller's
# session), and one started by setsid in a session of its own, as every forwarder was
# before: with autogroup scheduling (kernel.sched_autogroup_enabled) a session is a
# scheduling group the kernel weighs as much as the application's whatever the nice value
# of the forwarder's bulk threads.
COMPUTE_M=${BENCH_COMPUTE_M:-150}  # millions of additions (~0.6 s here)
# The first CPU this script may run on (a job's or container's CPU set need not hold 0).
PIN_CPU=$(taskset -pc $$ | sed 's/.*: *//' | cut -d, -f1 | cut -d- -f1)
[[ $PIN_CPU =~ ^[0-9]+$ ]] || { echo "bench_patterns.sh: no CPU to pin the compute step to" >&2; exit 1; }
declare -A cpid
for where in same own; do
  mkdir -p "$WORK/compute-$where"
  starter=()
  [[ $where == own ]] && starter=(setsid)
  env CKPTFWD_CAPTURE="$WORK/compute-$where/*" CKPTFWD_JOB_ID=bp-compute-$where-$$ CKPTFWD_IDLE_EXIT=3600 \
    taskset -c "$PIN_CPU" "${starter[@]}" "$FWD" --daemon ||
    { echo "bench_patterns.sh: the compute forwarder ($where) did not start" >&2; exit 1; }
  cpid[$where]=$(forwarder_of "bp-compute-$where-$$")
  [[ -n ${cpid[$where]:-} ]] || { echo "bench_patterns.sh: the compute forwarder ($where) is not found" >&2; exit 1; }
  compute_pids+=" ${cpid[$where]}"
done
COMPUTE_ROUNDS=${BENCH_COMPUTE_ROUNDS:-$([[ $QUICK == 1 ]] && echo 1 || echo 7)}
for ((r = 0; r < COMPUTE_ROUNDS; r++)); do
  for where in same own; do
    for state in idle busy; do
      drain_job bp-compute-same-$$
      drain_job bp-compute-own-$$
      sync
      if [[ $state == busy ]]; then
        close_busy_files "$WORK/compute-$where" "$WORK/compute-$where" "$r" "bp-compute-$where-$$" \
          taskset -c "$PIN_CPU" || exit 1
        await_busy "${cpid[$where]}" || echo "bench_patterns.sh: the forwarder never got busy" >&2
      fi
      line=$(taskset -c "$PIN_CPU" "$BP" --compute "$COMPUTE_M") ||
        { echo "bench_patterns.sh: the compute step failed" >&2; exit 1; }
      echo "compute-$where-$state 0 compute $r ${line#* }" >>"$RAW"
    done
  done
done
drain_job bp-compute-same-$$
drain_job bp-compute-own-$$
kill -TERM $compute_pids 2>/dev/null
compute_pids=
fi

# Small files from a Python script: written and read back in one process, then read back
# by a new one (a new job under the library: from the store).
cat >"$WORK/small.py" <<'EOF'
import os, sys, time
what, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
blob = lambda i: (b"%08d" % i) * 512
if what == "write":
    os.makedirs(d, exist_ok=True)
    t0 = time.monotonic()
    for i in range(n):
        with open(f"{d}/f{i}.bin", "wb") as f:
            f.write(blob(i))
    t1 = time.monotonic()
    print(f"write={t1 - t0:.6f}", end=" ")
t0 = time.monotonic()
bad = 0
for i in range(n):
    with open(f"{d}/f{i}.bin", "rb") as f:
        bad += f.read() != blob(i)
t1 = time.monotonic()
print(f"read={t1 - t0:.6f}")
sys.exit(1 if bad else 0)
EOF
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; }
for files in $([[ $BUSY_ONLY == 1 ]] || echo "$SMALL"); do
  for ((r = 0; r < ROUNDS; r++)); do
    d=$WORK/small-direct/$files-$r l=$WORK/small-lib/$files-$r
    mkdir -p "$d" "$l"
    line=$("$PY" "$WORK/small.py" write "$d" "$files") || { echo "bench_patterns.sh: small direct failed" >&2; exit 1; }
    warm=$("$PY" "$WORK/small.py" read "$d" "$files")
    cold=read=n/a
    drop_caches && cold=$("$PY" "$WORK/small.py" read "$d" "$files")
    echo "small-direct $files $r $line warm_${warm} cold_${cold}" >>"$RAW"
    line=$(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$l/*" CKPTFWD_JOB_ID=bp-small-$$-$files-$r \
      CKPTFWD_IDLE_EXIT=1 "$PY" "$WORK/small.py" write "$l" "$files") ||
      { echo "bench_patterns.sh: small under the library failed" >&2; exit 1; }
    again=$(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$l/*" CKPTFWD_JOB_ID=bp-small2-$$-$files-$r \
      CKPTFWD_IDLE_EXIT=1 "$PY" "$WORK/small.py" read "$l" "$files") ||
      { echo "bench_patterns.sh: the new job's read-back failed" >&2; exit 1; }
    echo "small-lib $files $r $line newjob_${again}" >>"$RAW"
  done
done
# The calls of a small file one by one (bench_calls): open, write and close of 2,000
# files of 4 KiB, directly to the disk and to tmpfs and under the library with the running
# forwarder, against the round trip of a local socket.
for ((r = 0; r < ROUNDS * !BUSY_ONLY; r++)); do
  line=$("$BC" socket) || { echo "bench_patterns.sh: bench_calls socket failed" >&2; exit 1; }
  echo "calls socket $line" >>"$RAW"
  for where in disk tmpfs library; do
    case $where in
      disk) d=$WORK/calls-disk-$r pre=(env) ;;
      tmpfs) d=$SHM/calls-$r pre=(env) ;;
      library) d=$WORK/running/calls-$r
        pre=(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$WORK/running/*" CKPTFWD_JOB_ID=$RUN_JOB) ;;
    esac
    mkdir -p "$d"
    line=$("${pre[@]}" "$BC" files --dir "$d") || { echo "bench_patterns.sh: bench_calls $where failed" >&2; exit 1; }
    echo "calls $where $line" >>"$RAW"
  done
  rm -rf "$SHM/calls-$r"
done
# What loading the library costs a process at its start (bench_calls start, /bin/true):
# without it, under it beside the running forwarder, and under it with no forwarder
# listening (a new job per run: its early start spawns ckptfwd-launch and waits for it).
for ((r = 0; r < ROUNDS * !BUSY_ONLY; r++)); do
  line=$("$BC" start) || { echo "bench_patterns.sh: bench_calls start failed" >&2; exit 1; }
  echo "calls bare $line" >>"$RAW"
  line=$(CKPTFWD_CAPTURE="$WORK/running/*" CKPTFWD_JOB_ID=$RUN_JOB "$BC" start --preload "$LIB") ||
    { echo "bench_patterns.sh: bench_calls start (running) failed" >&2; exit 1; }
  echo "calls preloaded $line" >>"$RAW"
  # (their forwarders' stores, empty, in a directory of their own: the restore below
  # checks the stores the patterns wrote)
  mkdir -p "$WORK/start-only"
  line=$(CKPTFWD_CAPTURE="$WORK/start-only/*" CKPTFWD_IDLE_EXIT=1 "$BC" start --reps 10 --preload "$LIB" \
    --fresh-job "bp-start-$$-$r") || { echo "bench_patterns.sh: bench_calls start (fresh) failed" >&2; exit 1; }
  echo "calls earlystart $line" >>"$RAW"
done
drain_job "$RUN_JOB"
kill -TERM "$running_pid" 2>/dev/null
for _ in $(seq 100); do kill -0 "$running_pid" 2>/dev/null || break; sleep 0.2; done
running_pid=

# Every file the library stored, restored and compared with the direct run's.
bad=0
for variant in running started nogate compute-same compute-own; do
  [[ -d $WORK/$variant/.ckptfwd ]] || continue  # (BENCH_BUSY_ONLY: no started runs)
  out=$WORK/restored-$variant
  "$CLI" restore "$WORK/$variant/.ckptfwd" --to "$out" >"$WORK/restore.out" 2>&1 || {
    bad=1
    echo "bench_patterns.sh: restore of $variant: $(tail -2 "$WORK/restore.out")" >&2
  }
  for p in $PATTERNS; do
    [[ -e $SHM/tmpfs/$p.dat ]] || continue  # (n/a)
    [[ $variant == nogate && $p != write ]] && continue  # (the busy write only)
    [[ $variant == compute-* ]] && continue  # (its busy files only)
    got=$out$WORK/$variant/$p.dat
    [[ -e $got ]] || got=$out/$p.dat
    cmp -s "$SHM/tmpfs/$p.dat" "$got" || { echo "bench_patterns.sh: $variant $p.dat restored wrong" >&2; bad=1; }
  done
  # The busy files: their values again from the noisy base.
  [[ -d $WORK/$variant/busy || $variant == compute-* ]] && { "$PY" - "$SHM/noisy.dat" "$out" <<'EOF' || bad=1; }
import glob, numpy as np, os, re, sys
base, n = np.fromfile(sys.argv[1]), 0
for f in glob.glob(os.path.join(sys.argv[2], "**", "f*-*.dat"), recursive=True):
    r, i = map(int, re.match(r"f(\d+)-(\d+)\.dat", os.path.basename(f)).groups())
    if open(f, "rb").read() != (base + (r * 64 + i + 1) * 1e-6).tobytes():
        sys.exit(f"bench_patterns.sh: {f} restored wrong")
    n += 1
if n == 0:
    sys.exit(f"bench_patterns.sh: no busy file restored into {sys.argv[2]}")
EOF
done
for l in "$WORK"/small-lib/*; do
  [[ -d $l ]] || continue
  out=$WORK/restored-small
  rm -rf "$out"
  "$CLI" restore "$l/.ckptfwd" --to "$out" >/dev/null 2>&1 || bad=1
  d=$WORK/small-direct/$(basename "$l")
  got=$(find "$out" -name 'f*.bin' | wc -l)
  want=$(find "$d" -name 'f*.bin' | wc -l)
  [[ $got -eq $want ]] || { echo "bench_patterns.sh: $l: $got of $want files restored" >&2; bad=1; }
  for f in "$d"/f1.bin "$d"/f7.bin; do
    g=$out$l/$(basename "$f")
    [[ -e $g ]] || g=$out/$(basename "$f")
    cmp -s "$f" "$g" || { echo "bench_patterns.sh: $l/$(basename "$f") restored wrong" >&2; bad=1; }
  done
done
rm -rf "$WORK/disk" "$WORK/small-direct" "$WORK"/restored-* "$WORK"/calls-disk-*

"$PY" - "$RAW" "$OUT" "$bad" "${OUT%.json}.svg" "$SIZE" "$BP" <<'PY'
import json, math, statistics, subprocess, sys
raw, out, bad, svg, size, bp = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], int(sys.argv[5]), sys.argv[6]
what = dict(l.split("\t") for l in subprocess.run([bp, "--list"], capture_output=True, text=True).stdout.splitlines())
pat, small, calls = {}, {}, {}
for line in open(raw):
    f = line.split()
    if f[0] == "calls":
        for kv in f[2:]:
            k, v = kv.split("=")
            calls.setdefault(f"{f[1]}_{k}", []).append(float(v))
        continue
    if f[0].startswith("small"):
        kv = dict(x.split("=") for x in f[3:])
        small.setdefault(int(f[1]), {}).setdefault(f[0], []).append(kv)
        continue
    variant, fs, p = f[0], f[1], f[2]
    kv = dict(x.split("=") for x in f[4:])
    if "seconds" in kv:
        pat.setdefault(p, {}).setdefault(f"{variant}{'_fsync' if fs == '1' else ''}", []).append(float(kv["seconds"]))
med = lambda xs: statistics.median(xs) if xs else None
res = {"byte_exact": not bad, "bytes": size, "patterns": [], "small_files": []}
print(f"(j) write patterns, one file of {size >> 20} MiB per process, s (median of rounds); "
      "running: a forwarder started beforehand, started: the process starts it (early start)")
hdr = ["tmpfs", "disk", "running", "/tmpfs", "started", "/tmpfs", "disk+fs", "running+fs", "/disk+fs", "started+fs", "/disk+fs"]
fmt = lambda x, spec=".3f": "-" if x is None else format(x, spec)
ran = any("tmpfs" in v for v in pat.values())  # (not with BENCH_BUSY_ONLY=1)
if ran:
    print(f"{'pattern':<15}" + "".join(f"{h:>11}" for h in hdr))
for p in what if ran else []:
    if p not in pat:
        print(f"{p:<15} n/a (refused on this file system)")
        continue
    m = {k: med(v) for k, v in pat[p].items()}
    g = lambda k: m.get(k)
    ratio = lambda a, b: g(a) / g(b) if g(a) and g(b) else None
    row = {"pattern": p, "what": what[p], **{f"{k}_s": v for k, v in m.items()},
           "running_over_tmpfs": ratio("running", "tmpfs"), "started_over_tmpfs": ratio("started", "tmpfs"),
           "running_fsync_over_disk_fsync": ratio("running_fsync", "disk_fsync"),
           "started_fsync_over_disk_fsync": ratio("started_fsync", "disk_fsync")}
    res["patterns"].append(row)
    cells = [g("tmpfs"), g("disk"), g("running"), row["running_over_tmpfs"], g("started"), row["started_over_tmpfs"],
             g("disk_fsync"), g("running_fsync"), row["running_fsync_over_disk_fsync"], g("started_fsync"),
             row["started_fsync_over_disk_fsync"]]
    print(f"{p:<15}" + "".join(f"{fmt(c, '.2f' if i in (3, 5, 8, 10) else '.3f'):>11}" for i, c in enumerate(cells)))
busy = {k: med(pat.get("write", {}).get(f"beside-{k}", [])) for k in ("idle", "busy", "nogate")}
if busy["idle"] and busy["busy"]:
    res["beside_busy_forwarder"] = {"idle_s": busy["idle"], "busy_s": busy["busy"], "ratio": busy["busy"] / busy["idle"]}
    ng = busy["nogate"] / busy["idle"] if busy["nogate"] else None
    if ng:
        res["beside_busy_forwarder"].update(nogate_s=busy["nogate"], nogate_ratio=ng)
    print(f"  {size >> 20} MiB write (running forwarder) while it compresses earlier files: {busy['busy']:.3f} s, "
          f"idle {busy['idle']:.3f} s ({busy['busy'] / busy['idle']:.2f}x); a forwarder that does not give way "
          f"(CKPTFWD_YIELD_MS=0): {fmt(busy['nogate'])} s ({fmt(ng, '.2f')}x)")
cm = {k: med(pat.get("compute", {}).get(f"compute-{k}", [])) for k in ("same-idle", "same-busy", "own-idle", "own-busy")}
if cm["same-idle"] and cm["same-busy"] and cm["own-idle"] and cm["own-busy"]:
    res["compute_beside_busy_forwarder"] = {
        "idle_s": cm["same-idle"], "busy_s": cm["same-busy"], "ratio": cm["same-busy"] / cm["same-idle"],
        "own_session_idle_s": cm["own-idle"], "own_session_busy_s": cm["own-busy"],
        "own_session_ratio": cm["own-busy"] / cm["own-idle"]}
    c = res["compute_beside_busy_forwarder"]
    print(f"  a compute step on the forwarder's core while it compresses earlier files: {c['busy_s']:.3f} s, "
          f"idle {c['idle_s']:.3f} s ({c['ratio']:.2f}x); a forwarder in a session of its own: "
          f"{c['own_session_busy_s']:.3f} s, idle {c['own_session_idle_s']:.3f} s ({c['own_session_ratio']:.2f}x)")
if small:
    print("  small files from Python (4 KiB each), s: write (same process), read back in the same process, "
          "and by a new job (library: from the store) / a direct read with a warm and a cold page cache")
for files, v in sorted(small.items()):
    d, l = v["small-direct"], v["small-lib"]
    fl = lambda rows, k: med([float(r[k]) for r in rows if r.get(k, "n/a") != "n/a"])
    row = {"files": files, "direct_write_s": fl(d, "write"), "lib_write_s": fl(l, "write"),
           "direct_read_same_s": fl(d, "read"), "lib_read_same_s": fl(l, "read"),
           "direct_read_warm_s": fl(d, "warm_read"), "direct_read_cold_s": fl(d, "cold_read"),
           "lib_read_new_job_s": fl(l, "newjob_read")}
    row["write_ratio"] = row["lib_write_s"] / row["direct_write_s"]
    row["new_job_over_warm"] = row["lib_read_new_job_s"] / row["direct_read_warm_s"]
    row["new_job_over_cold"] = row["lib_read_new_job_s"] / row["direct_read_cold_s"] if row["direct_read_cold_s"] else None
    res["small_files"].append(row)
    print(f"  {files:>6} files: write {row['direct_write_s']:.3f} direct, {row['lib_write_s']:.3f} library "
          f"({row['write_ratio']:.2f}x); read same process {row['direct_read_same_s']:.3f} / {row['lib_read_same_s']:.3f}; "
          f"new job {row['lib_read_new_job_s']:.3f} vs warm {row['direct_read_warm_s']:.3f} ({row['new_job_over_warm']:.2f}x), "
          f"cold {fmt(row['direct_read_cold_s'])} ({fmt(row['new_job_over_cold'], '.2f')}x)")
if calls:
    c = {k: med(v) for k, v in calls.items()}
    rtt = c.get("socket_rtt_us")
    res["per_call_us"] = c
    print(f"  per call of a 4 KiB file (median us; bench_calls): a local socket round trip {fmt(rtt, '.1f')}")
    for where, what in (("disk", "directly to the disk"), ("tmpfs", "directly to tmpfs"), ("library", "under the library")):
        g = lambda k: c.get(f"{where}_{k}_us")
        if g("file") is None:
            continue
        print(f"    {what:<22} open {g('open'):7.1f}  write {g('write'):6.1f}  close {g('close'):7.1f}  file {g('file'):7.1f}"
              + (f"  ({(g('file') - c['tmpfs_file_us']) / rtt:.1f} round trips over tmpfs's)" if where == "library" and rtt and c.get("tmpfs_file_us") else ""))
if calls and calls.get("bare_start_us"):
    c = res["per_call_us"]
    print(f"  a process's start and exit (/bin/true, median us): {c['bare_start_us']:.0f} without the library, "
          f"{fmt(c.get('preloaded_start_us'), '.0f')} under it beside a running forwarder, "
          f"{fmt(c.get('earlystart_start_us'), '.0f')} under it with none listening (its early start)")
print(f"  every file read back by its writer; restore of the library's files: {'byte-exact' if not bad else 'NOT byte-exact'}")
json.dump(res, open(out, "w"), indent=1)
# The plot: per pattern, the library's time over its baseline (tmpfs without fsync, the
# disk with fsync), log scale; 1 = the same.
bars = [("running_over_tmpfs", "#2a7", "running / tmpfs"), ("started_over_tmpfs", "#7b5", "started / tmpfs"),
        ("running_fsync_over_disk_fsync", "#27c", "running+fsync / disk+fsync"),
        ("started_fsync_over_disk_fsync", "#79d", "started+fsync / disk+fsync")]
rows = res["patterns"]
W, L, rowh = 760, 130, 18 * len(bars) + 14
H = 50 + rowh * len(rows)
top = max([r[k] or 1 for r in rows for k, _, _ in bars] + [2])
lo = min([r[k] or 1 for r in rows for k, _, _ in bars] + [0.5])
x = lambda v: L + (math.log10(v) - math.log10(lo)) / (math.log10(top * 1.3) - math.log10(lo)) * (W - L - 150)
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
     '<rect width="100%" height="100%" fill="white"/>',
     '<text x="10" y="18">time through ckptfwd / baseline (log scale; the line: 1 = the same)</text>',
     f'<line x1="{x(1):.0f}" y1="28" x2="{x(1):.0f}" y2="{H - 6}" stroke="#333"/>']
for i, r in enumerate(rows):
    y = 34 + rowh * i
    o.append(f'<text x="10" y="{y + 30}">{r["pattern"]}</text>')
    for j, (k, c, lab) in enumerate(bars):
        if r[k] is None:
            continue
        x0, x1 = sorted((x(1), x(r[k])))
        o.append(f'<rect x="{x0:.0f}" y="{y + 18 * j}" width="{max(1, x1 - x0):.0f}" height="15" fill="{c}"/>')
        o.append(f'<text x="{max(x1, x(1)) + 4:.0f}" y="{y + 18 * j + 12}">{lab} {r[k]:.2f}x</text>')
o.append("</svg>")
open(svg, "w").write("\n".join(o) + "\n")
print(f"  JSON: {out}  plot: {svg}")
sys.exit(1 if bad else 0)
PY
