#!/usr/bin/env bash
# make bench-export: what `ckptfwd export` saves against restoring the files and assembling
# the array by hand. The demo (build/bin/stencil3d, BENCH_EXPORT_RANKS ranks of
# BENCH_EXPORT_SIZE cells each, 4 steps, a checkpoint every 2: checkpoints 2 and 4, each
# file a 40-byte header, then temperature, then concentration, float64 [nz][ny][nx]) runs
# once without the library (the oracle) and once under it with examples/demo.schema (whose
# placements let export assemble the global field); the store is drained. Then, in
# interleaved rounds (the order rotated each round), the latest checkpoint's global
# temperature field as one array:
#   (a) ckptfwd export STORE --var temperature --to a.npy
#   (b) ckptfwd export STORE --var temperature --to b.h5    (where ckptfwd-h5export is built)
#   (c) the baseline, what a user does without export: ckptfwd restore STORE --latest (the
#       checkpoint's files, both variables), then numpy (/usr/bin/python3) assembles the
#       field from the ranks' files and numpy.save writes it
#   (d) the same after ckptfwd restore STORE of every file of the store (all checkpoints)
# Each time is the whole process's (start to exit, the output written). Before each
# method's run, outside the timing, its restore directory and output are removed and
# `sync` runs (export flushes its output to disk before it returns; the baseline's
# restore and numpy.save leave theirs to writeback, which would otherwise slow the next
# method's run). Checked:
# (a), (b) (read with h5py), (c) and (d) are the same array, bit for bit, as numpy's
# assembly of the oracle run's files, and the restored files are the oracle's bytes.
# Prints a table (median and min of the rounds, ratio of medians to (c), bytes decoded:
# export's --json decoded_bytes; a restore decodes every byte of the files it restores),
# writes OUT.json and OUT.svg (matplotlib); exit 1 when an array or a byte differs.
# usage: tools/bench/bench_export.sh [BUILD [WORK [OUT.json]]]
#        (defaults: build, BUILD/bench-export, BUILD/bench-export.json)
# Environment: BENCH_EXPORT_SIZE ("128 128 64": cells per rank, NX NY NZ; ranks stack
# along z), BENCH_EXPORT_RANKS (4), BENCH_EXPORT_REPS (rounds, 9; BENCH_QUICK=1: 3).
set -uo pipefail
export LC_ALL=C
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "bench_export.sh: build dir '${1:-build}' does not exist; run 'make'" >&2; exit 2; }
WORK=${2:-$BUILD/bench-export}
OUT=${3:-$BUILD/bench-export.json}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CLI=$BUILD/bin/ckptfwd APP=$BUILD/bin/stencil3d LIB=$BUILD/lib/libckptfwd-mpich.so
H5X=$BUILD/bin/ckptfwd-h5export SCHEMA=$REPO/examples/demo.schema
QUICK=${BENCH_QUICK:-0}
REPS=${BENCH_EXPORT_REPS:-$([[ $QUICK == 1 ]] && echo 3 || echo 9)}
read -r NX NY NZ <<<"${BENCH_EXPORT_SIZE:-128 128 64}"
RANKS=${BENCH_EXPORT_RANKS:-4}
[[ $NX =~ ^[0-9]+$ && $NY =~ ^[0-9]+$ && $NZ =~ ^[0-9]+$ && $RANKS =~ ^[0-9]+$ && $REPS =~ ^[1-9][0-9]*$ ]] ||
  { echo "bench_export.sh: BENCH_EXPORT_SIZE needs NX NY NZ; BENCH_EXPORT_RANKS and BENCH_EXPORT_REPS numbers" >&2; exit 2; }
for f in "$CLI" "$APP" "$LIB"; do
  [[ -e $f ]] || { echo "bench_export.sh: $f not built (stencil3d and the MPICH library need MPICH)" >&2; exit 2; }
done
for t in mpiexec.mpich bc /usr/bin/python3; do
  command -v "$t" >/dev/null || { echo "bench_export.sh: '$t' not found; run 'make deps'" >&2; exit 2; }
done
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "bench_export.sh: /usr/bin/python3 lacks numpy; run 'make deps'" >&2; exit 2; }
HAVE_H5=0
if [[ -x $H5X ]]; then
  /usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "bench_export.sh: /usr/bin/python3 lacks h5py; run 'make deps'" >&2; exit 2; }
  HAVE_H5=1
fi

rm -rf "$WORK" && mkdir -p "$WORK/out" || exit 2
WORK=$(cd "$WORK" && pwd)
mkdir -p "$(dirname "$OUT")" || exit 2
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
SVG=${OUT%.json}.svg
unset LD_PRELOAD CKPTFWD_CAPTURE CKPTFWD_STORE CKPTFWD_CONFIG CKPTFWD_SCHEMA CKPTFWD_LOSSY CKPTFWD_NODE_ID
STAGE=$(mktemp -d /dev/shm/bench-export.XXXXXX) || exit 2
export CKPTFWD_STAGE_DIR=$STAGE CKPTFWD_IDLE_EXIT=2 CKPTFWD_LOG=$WORK/ckptfwd.log
JOB=bench-export-$$-$RANDOM
trap 'rm -rf "$STAGE"' EXIT
load() { awk '{print $1}' /proc/loadavg 2>/dev/null || echo "?"; }
LOAD0=$(load)
O=$WORK/out STORE=$WORK/cap/.ckptfwd RAW=$WORK/raw.txt
: >"$RAW"

# Waits until no forwarder of job $1 runs (idle, it exits after CKPTFWD_IDLE_EXIT s), so
# that none shares the cores with the timed commands.
wait_gone() {
  local p exe i alive
  for ((i = 0; i < 300; i++)); do
    alive=0
    for p in /proc/[0-9]*; do
      exe=$(readlink "$p/exe" 2>/dev/null) || continue
      [[ $exe == */ckptfwd-forwarder ]] || continue
      tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "CKPTFWD_JOB_ID=$1" && alive=1
    done
    ((alive)) || return 0
    sleep 0.1
  done
  echo "bench_export.sh: the forwarder of job $1 did not exit" >&2
  exit 1
}

# timed NAME ROUND STDOUT CMD...: runs CMD, appends "NAME ROUND SECONDS" to RAW; a failure
# ends the bench.
timed() {
  local name=$1 round=$2 out=$3 t0 t1 rc
  shift 3
  t0=$EPOCHREALTIME
  "$@" >"$out" 2>"$WORK/err"
  rc=$?
  t1=$EPOCHREALTIME
  if [[ $rc -ne 0 ]]; then
    echo "bench_export.sh: $name failed (exit $rc): $*: $(tail -5 "$WORK/err")" >&2
    exit 1
  fi
  echo "$name $round $(echo "$t1 - $t0" | bc)" >>"$RAW"
}

# --- the two runs of the demo ---
demo() {  # DIR [env ... before the program]
  local dir=$1
  shift
  timed "demo_$(basename "$dir")" 0 "$WORK/demo-$(basename "$dir").out" timeout 600 mpiexec.mpich -n "$RANKS" "$@" \
    "$APP" --size "$NX" "$NY" "$NZ" --steps 4 --ckpt-every 2 --ckpt-dir "$dir" --quiet
}
echo "bench-export: the demo, $RANKS ranks x $NX x $NY x $NZ cells, checkpoints 2 and 4: without the library, then under it" >&2
demo "$WORK/direct"
demo "$WORK/cap" env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$WORK/cap/*" CKPTFWD_SCHEMA="$SCHEMA" CKPTFWD_JOB_ID="$JOB"
CKPTFWD_JOB_ID=$JOB timeout 120 "$CLI" drain >"$WORK/drain.out" 2>&1 ||
  { echo "bench_export.sh: ckptfwd drain (job $JOB) failed: $(cat "$WORK/drain.out")" >&2; exit 1; }
wait_gone "$JOB"
"$CLI" ls "$STORE" --json >"$WORK/ls.json" 2>"$WORK/err" &&
  "$CLI" ls "$STORE" --steps --json >"$WORK/steps.json" 2>>"$WORK/err" ||
  { echo "bench_export.sh: ckptfwd ls of $STORE failed: $(cat "$WORK/err")" >&2; exit 1; }
STEP=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["latest_complete"] or "")' "$WORK/steps.json")
[[ -n $STEP ]] || { echo "bench_export.sh: the store has no complete checkpoint: $(cat "$WORK/steps.json")" >&2; exit 1; }
# (restore --latest lands the files at DIR + their path below the capture directory.)
for r in $(seq 0 $((RANKS - 1))); do
  [[ -e $WORK/direct/ckpt_${STEP}_r$r.bin ]] || { echo "bench_export.sh: the oracle run lacks ckpt_${STEP}_r$r.bin" >&2; exit 1; }
done

# The baseline's by-hand assembly, as a user writes it: each rank's block of temperature
# from its file (the header gives rank and block shape), stacked along z in rank order.
cat >"$WORK/assemble.py" <<'PY'
import glob, sys
import numpy as np
d, step, out = sys.argv[1], sys.argv[2], sys.argv[3]
blocks = {}
for path in glob.glob(f"{d}/ckpt_{step}_r*.bin"):
    h = np.fromfile(path, dtype="<i4", count=6, offset=8)  # version rank nranks nx ny nz
    rank, nx, ny, nz = int(h[1]), int(h[3]), int(h[4]), int(h[5])
    blocks[rank] = np.fromfile(path, dtype="<f8", count=nx * ny * nz, offset=40).reshape(nz, ny, nx)
np.save(out, np.concatenate([blocks[r] for r in sorted(blocks)], axis=0))
PY

# --- the timed rounds ---
METHODS=(a c d)
((HAVE_H5)) && METHODS=(a b c d)
echo "bench-export: $REPS rounds of: ${METHODS[*]} (checkpoint $STEP)" >&2
for ((r = 0; r < REPS; r++)); do
  n=${#METHODS[@]}
  for ((k = 0; k < n; k++)); do
    m=${METHODS[$(((k + r) % n))]}
    # No method's writes are left to the page cache's writeback during the next one's
    # timing (none of export, restore and numpy.save flushes its output).
    sync
    case $m in
      a)
        rm -f "$O/a.npy"
        timed export_npy "$r" "$O/a.json" "$CLI" export "$STORE" --var temperature --to "$O/a.npy" --json ;;
      b)
        rm -f "$O/b.h5"
        timed export_h5 "$r" "$O/b.json" "$CLI" export "$STORE" --var temperature --to "$O/b.h5" --json ;;
      c)
        rm -rf "$O/latest" "$O/c.npy"
        timed restore_latest "$r" "$O/c-restore.out" "$CLI" restore "$STORE" --to "$O/latest" --latest
        timed numpy_latest "$r" "$O/c-numpy.out" /usr/bin/python3 "$WORK/assemble.py" "$O/latest" "$STEP" "$O/c.npy" ;;
      d)
        rm -rf "$O/all" "$O/d.npy"
        timed restore_all "$r" "$O/d-restore.out" "$CLI" restore "$STORE" --to "$O/all"
        timed numpy_all "$r" "$O/d-numpy.out" /usr/bin/python3 "$WORK/assemble.py" "$O/all" "$STEP" "$O/d.npy" ;;
    esac
  done
done

# --- checks: the last round's outputs ---
bad=0
for f in "$WORK/direct"/ckpt_*_r*.bin; do
  b=$(basename "$f")
  if [[ $b == ckpt_${STEP}_r* ]]; then
    cmp -s "$f" "$O/latest/$b" || { echo "bench_export.sh: restore --latest: $b differs from the oracle run's" >&2; bad=1; }
  fi
  cmp -s "$f" "$O/all/$b" || { echo "bench_export.sh: restore: $b differs from the oracle run's" >&2; bad=1; }
done
# (its verdict goes to check.json, which the report reads)
/usr/bin/python3 - "$WORK/direct" "$STEP" "$O" "$HAVE_H5" "$WORK/check.json" <<'PY'
# Every method's array against numpy's assembly of the oracle run's files, bit for bit.
import filecmp, json, subprocess, sys
import numpy as np
direct, step, o, have_h5, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
subprocess.run([sys.executable, o + "/../assemble.py", direct, step, o + "/oracle.npy"], check=True)
want = np.load(o + "/oracle.npy")
got = {"export_npy": lambda: np.load(o + "/a.npy"),
       "restore_latest_numpy": lambda: np.load(o + "/c.npy"),
       "restore_all_numpy": lambda: np.load(o + "/d.npy")}
if have_h5:
    import h5py
    def h5():
        with h5py.File(o + "/b.h5", "r") as f:
            return f["temperature"][()]
    got["export_h5"] = h5
res = {"oracle_shape": list(want.shape), "methods": {}}
ok = True
for name, load in got.items():
    try:
        a = load()
        same = a.dtype == want.dtype and a.shape == want.shape and np.array_equal(a.view("u8"), want.view("u8"))
        why = "" if same else f"dtype {a.dtype} shape {a.shape} against {want.dtype} {want.shape}" + (
            f", {int(np.count_nonzero(a.view('u8') != want.view('u8')))} elements differ" if a.shape == want.shape and a.dtype.itemsize == 8 else "")
    except Exception as e:  # a missing or unreadable output is a failure, named
        same, why = False, repr(e)
    res["methods"][name] = {"bit_exact": bool(same), "why": why}
    if not same:
        print(f"bench_export.sh: {name}: not the oracle's array: {why}", file=sys.stderr)
        ok = False
# (informative: the .npy files themselves, header included)
try:
    res["npy_files_identical"] = filecmp.cmp(o + "/a.npy", o + "/c.npy", shallow=False)
except OSError:
    res["npy_files_identical"] = None
json.dump(res, open(out, "w"))
sys.exit(0 if ok else 1)
PY

# --- table, JSON, plot ---
/usr/bin/python3 - "$RAW" "$OUT" "$SVG" "$bad" "$WORK" "$STEP" "$NX $NY $NZ" "$RANKS" "$LOAD0 $(load)" "$HAVE_H5" <<'PY'
import json, statistics, sys
raw, out, svg, bad, work, step, size, ranks, loads, have_h5 = sys.argv[1:11]
bad, ranks, have_h5 = bad == "1", int(ranks), have_h5 == "1"
nx, ny, nz = map(int, size.split())
o = work + "/out"
t = {}
for line in open(raw):
    name, r, s = line.split()
    t.setdefault(name, {})[int(r)] = float(s)
rounds = sorted(t["export_npy"])
ls = json.load(open(work + "/ls.json"))
steps = json.load(open(work + "/steps.json"))
ck = next(c for c in steps["checkpoints"] if c["step"] == step)
try:
    check = json.load(open(work + "/check.json"))
except (OSError, ValueError):
    check = {"methods": {}}
ja = json.load(open(o + "/a.json"))
jb = json.load(open(o + "/b.json")) if have_h5 else None
all_bytes = sum(f["size"] for f in ls["files"])
MiB = 1 << 20

def stats(xs):
    return {"median_s": statistics.median(xs), "min_s": min(xs), "max_s": max(xs), "runs_s": xs}

methods = []
def add(key, label, per_round, decoded, written, parts=None, json_out=None):
    m = {"method": key, "label": label, **stats(per_round), "decoded_bytes": decoded, "written_bytes": written,
         "bit_exact": check["methods"].get(key, {}).get("bit_exact", False)}
    if parts:
        m["parts"] = {p: stats(v) for p, v in parts.items()}
    if json_out:
        m["export_json"] = {k: json_out[k] for k in ("decoded_bytes", "file_bytes", "shape", "assembled", "how", "step")}
    methods.append(m)

npy_bytes = ja["shape"][0] * ja["shape"][1] * ja["shape"][2] * 8
add("export_npy", "(a) export --to .npy", [t["export_npy"][r] for r in rounds], ja["decoded_bytes"], npy_bytes, json_out=ja)
if have_h5:
    add("export_h5", "(b) export --to .h5", [t["export_h5"][r] for r in rounds], jb["decoded_bytes"], npy_bytes, json_out=jb)
add("restore_latest_numpy", "(c) restore --latest + numpy", [t["restore_latest"][r] + t["numpy_latest"][r] for r in rounds],
    ck["bytes_in"], ck["bytes_in"] + npy_bytes,
    parts={"restore": [t["restore_latest"][r] for r in rounds], "numpy": [t["numpy_latest"][r] for r in rounds]})
add("restore_all_numpy", "(d) restore all + numpy", [t["restore_all"][r] + t["numpy_all"][r] for r in rounds],
    all_bytes, all_bytes + npy_bytes,
    parts={"restore": [t["restore_all"][r] for r in rounds], "numpy": [t["numpy_all"][r] for r in rounds]})
base = next(m for m in methods if m["method"] == "restore_latest_numpy")
for m in methods:
    m["ratio_to_baseline"] = m["median_s"] / base["median_s"]
    m["min_ratio_to_baseline"] = m["min_s"] / base["min_s"]

gshape = "x".join(map(str, ja["shape"]))
print(f"bench-export: temperature of checkpoint {step} as one array ({gshape} float64, {npy_bytes / MiB:.1f} MiB);")
print(f"  {ranks} ranks x {nx}x{ny}x{nz} cells, 2 variables: {ck['bytes_in'] / MiB:.1f} MiB per checkpoint, "
      f"{ck['bytes_stored'] / MiB:.1f} MiB stored; the store holds {len(steps['checkpoints'])} checkpoints, "
      f"{all_bytes / MiB:.1f} MiB of files")
print(f"  {len(rounds)} rounds, interleaved; whole-process times; baseline (c)")
print(f"{'method':<40} {'median s':>9} {'min s':>8} {'/baseline':>10} {'decoded MiB':>12}")
for m in methods:
    print(f"{m['label'] + (' (baseline)' if m is base else ''):<40} {m['median_s']:9.3f} {m['min_s']:8.3f} "
          f"{m['ratio_to_baseline']:10.2f} {m['decoded_bytes'] / MiB:12.1f}")
    for p, v in (m.get("parts") or {}).items():
        print(f"{'    ' + ('ckptfwd restore' if p == 'restore' else 'numpy assemble + save'):<40} {v['median_s']:9.3f} {v['min_s']:8.3f}")
print(f"  export --json: decoded_bytes {ja['decoded_bytes']} of file_bytes {ja['file_bytes']} "
      f"({ja['decoded_bytes'] / ja['file_bytes']:.3f}); the files hold temperature and concentration")
exact = all(m["bit_exact"] for m in methods)
print(f"  arrays against numpy's assembly of the run without the library: {'bit-exact' if exact else 'NOT bit-exact'}; "
      f"restored files against the run's: {'byte-exact' if not bad else 'NOT byte-exact'}")
load0, load1 = loads.split()
print(f"  load average (other work on this machine): {load0} at the start, {load1} at the end")
res = {"bench": "export", "var": "temperature", "step": step, "global_shape": ja["shape"], "dtype": "float64",
       "ranks": ranks, "cells_per_rank": [nx, ny, nz], "checkpoint_bytes": ck["bytes_in"],
       "checkpoint_stored_bytes": ck["bytes_stored"], "store_file_bytes": all_bytes,
       "checkpoints_in_store": len(steps["checkpoints"]), "rounds": len(rounds), "baseline": base["method"],
       "methods": methods, "bit_exact": exact, "byte_exact_restores": not bad,
       "npy_files_identical": check.get("npy_files_identical"), "load_average": [load0, load1],
       "demo_s": {"direct": t["demo_direct"][0], "ckptfwd": t["demo_cap"][0]}}
json.dump(res, open(out, "w"), indent=1)
try:
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
except ImportError as e:
    print(f"  JSON: {out}  (no plot: {e}; Debian: apt-get install python3-matplotlib)")
else:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 0.6 * len(methods) + 1.6), sharey=True,
                                   gridspec_kw={"width_ratios": [3, 2]})
    ys = list(range(len(methods)))[::-1]
    for y, m in zip(ys, methods):
        if "parts" in m:
            # the median's split in the parts' median shares
            pr, pn = m["parts"]["restore"]["median_s"], m["parts"]["numpy"]["median_s"]
            w1 = m["median_s"] * pr / (pr + pn)
            ax1.barh(y, w1, color="#c55", label="ckptfwd restore" if m is base else None)
            ax1.barh(y, m["median_s"] - w1, left=w1, color="#e9a", label="numpy assemble + save" if m is base else None)
        else:
            ax1.barh(y, m["median_s"], color="#2a7", label="ckptfwd export" if m["method"] == "export_npy" else None)
        ax1.plot([m["min_s"]], [y], "k|", markersize=14)
        ax1.text(m["median_s"], y, f" {m['median_s']:.3f} s ({m['ratio_to_baseline']:.2f}x)", va="center", fontsize=9)
        ax2.barh(y, m["decoded_bytes"] / MiB, color="#57a")
        ax2.text(m["decoded_bytes"] / MiB, y, f" {m['decoded_bytes'] / MiB:.0f}", va="center", fontsize=9)
    ax1.set_yticks(ys, [m["label"] for m in methods])
    ax1.set_xlabel(f"seconds (median of {len(rounds)}; | = min)")
    ax1.set_xlim(0, max(m["median_s"] for m in methods) * 1.45)
    ax1.legend(loc="upper right", fontsize=8)
    ax2.set_xlabel("MiB decoded")
    ax2.set_xlim(0, max(m["decoded_bytes"] for m in methods) / MiB * 1.25)
    fig.suptitle(f"temperature of checkpoint {step} ({gshape} float64) from a store of {ranks} ranks' files", fontsize=11)
    fig.tight_layout()
    fig.savefig(svg)
    print(f"  JSON: {out}  plot: {svg}")
sys.exit(0 if exact and not bad else 1)
PY
