#!/usr/bin/env bash
# Structure inference end to end, as a user runs it: HDF5 (h5py), netCDF classic and
# netCDF-4 (ncgen) checkpoints written under the library, plus malformed copies of each
# (truncated, bit-flipped). After the drain:
#  - `ckptfwd ls STORE --vars --json` gives every captured file the map `ckptfwd inspect`
#    gives the file of the run without the library (same source, keys, shapes, bytes), and
#    the good files have one (hdf5, netcdf);
#  - the malformed files are stored agnostic or mapped consistently, the forwarder stays
#    up (it still serves a read after them) and its stats count maps and failures;
#  - HDF5 files that crash (a B-tree node that is its own child) or hang (a B-tree whose
#    fan-out never ends) libhdf5 cost only their own maps: stored agnostic, the hang cut
#    off by CKPTFWD_INFER_TIMEOUT_MS;
#  - every file restores byte for byte.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd ncgen
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || skip "python3-h5py/numpy not installed for /usr/bin/python3"

HERE=$(cd "$(dirname "$0")" && pwd)
DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
export CKPTFWD_INFER_TIMEOUT_MS=1500

# The same writes into both directories: directly, then under the library.
write_all() {  # DIR RUNNER...
  local dir=$1
  shift
  "$@" /usr/bin/python3 "$HERE/make_h5.py" "$dir/ckpt.h5" || return 1
  "$@" ncgen -k classic -b -o "$dir/x_classic.nc" "$HERE/data_x.cdl" || return 1
  "$@" ncgen -k nc4 -b -o "$dir/x_nc4.nc" "$HERE/data_x.cdl" || return 1
  "$@" cp "$HERE/data/h5_btree_self_loop_crash.h5" "$HERE/data/h5_btree_fanout_hang.h5" "$dir/" || return 1
  # Malformed copies, made from the direct files (deterministic bytes).
  "$@" /usr/bin/python3 - "$DIRECT" "$dir" <<'PY' || return 1
import sys
src, dst = sys.argv[1:]
for name in ("ckpt.h5", "x_classic.nc"):
    b = bytearray(open(f"{src}/{name}", "rb").read())
    with open(f"{dst}/trunc_{name}", "wb") as f:
        f.write(b[: len(b) // 3])
    flipped = bytearray(b)
    for i in range(8, min(len(flipped), 600), 37):
        flipped[i] ^= 0x5A
    with open(f"{dst}/flip_{name}", "wb") as f:
        f.write(flipped)
PY
}
write_all "$DIRECT" || fail "writing without the library failed"
write_all "$CAP" with_lib 2>"$T/write.err" || fail "writing under the library failed: $(tail -5 "$T/write.err")"
[[ ! -f "$CAP/ckpt.h5" ]] || fail "$CAP/ckpt.h5 is a regular file on disk: not captured"
drain

# The forwarder is still there and serves reads after the malformed files.
with_lib cat "$CAP/x_classic.nc" >"$T/readback.nc" || fail "read-back through the library failed"
assert_same_bytes "$DIRECT/x_classic.nc" "$T/readback.nc" "read-back after malformed files"

STORE=$CAP/.ckptfwd
"$CLI" ls "$STORE" --vars --json >"$T/ls.json" 2>"$T/ls.err" || fail "ckptfwd ls --vars --json failed: $(cat "$T/ls.err")"
"$CLI" ls "$STORE" --vars >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --vars failed: $(cat "$T/ls.txt")"
for f in "$DIRECT"/*; do
  "$CLI" inspect --json "$f" >>"$T/inspect.json" 2>>"$T/inspect.err" || fail "ckptfwd inspect $f failed: $(cat "$T/inspect.err")"
done
/usr/bin/python3 - "$T/ls.json" "$T/inspect.json" "$CAP" <<'PY' || fail "ls --vars disagrees with inspect (above)"
import json, os, sys
ls = json.load(open(sys.argv[1]))
cap = sys.argv[3]
inspected = [json.loads(l) for l in open(sys.argv[2])]
files = {f["path"]: f for f in ls["files"]}
keys = {}
for k in ls["keys"]:
    for h in k["shapes"]:
        keys.setdefault(h["path"], {})[k["key"]] = h["shape"]
bad = []
for m in inspected:
    name = os.path.basename(m["file"])
    path = f"{cap}/{name}"
    f = files.get(path)
    if f is None:
        bad.append(f"{path}: not listed by ls --vars"); continue
    if f["source"] != m["source"]:
        bad.append(f"{name}: source {f['source']!r} in the store, {m['source']!r} by inspect ({m['detail']})")
    want = {v["key"]: v["shape"] for v in m["vars"]}
    if keys.get(path, {}) != want:
        bad.append(f"{name}: keys/shapes differ: store {keys.get(path)} inspect {want}")
    mapped = sum(v["bytes"] for v in m["vars"])
    if f["mapped_bytes"] != mapped or f["residual_bytes"] != m["residual_bytes"]:
        bad.append(f"{name}: mapped/residual {f['mapped_bytes']}/{f['residual_bytes']} vs {mapped}/{m['residual_bytes']}")
    expect = {"ckpt.h5": "hdf5", "x_nc4.nc": "hdf5", "x_classic.nc": "netcdf"}.get(name)
    if expect and m["source"] != expect:
        bad.append(f"{name}: expected a map from {expect}, got {m['source']!r}: {m['detail']}")
    if (name.startswith("trunc_") or name.startswith("h5_btree_")) and m["source"]:
        bad.append(f"{name}: a truncated file got a map from {m['source']}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
grep -q "x_classic.nc" "$T/ls.txt" || fail "ls --vars text names no file: $(head "$T/ls.txt")"
grep -q "agnostic" "$T/ls.txt" || fail "ls --vars text does not say which files are agnostic: $(cat "$T/ls.txt")"
grep -q "h5_btree_self_loop_crash.h5 .*crashed with signal" "$CKPTFWD_LOG" ||
  fail "the forwarder's log does not say the HDF5 helper crashed on h5_btree_self_loop_crash.h5: $(grep h5_btree "$CKPTFWD_LOG")"
grep -q "h5_btree_fanout_hang.h5 .*timed out after 1500 ms" "$CKPTFWD_LOG" ||
  fail "the forwarder's log does not say the HDF5 helper timed out on h5_btree_fanout_hang.h5: $(grep h5_btree "$CKPTFWD_LOG")"
ok "ls --vars of the store agrees with inspect of the direct files; malformed files agnostic"

# The forwarder's counters reach the stats file when it exits idle (its socket may be gone
# by now on a slow machine, so `ckptfwd stats` is not asked).
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "the forwarder did not exit after going idle"
mapped=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder files_mapped) || fail "stats file: $mapped"
failures=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder infer_failures) || fail "stats file: $failures"
bytes=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder bytes_mapped) || fail "stats file: $bytes"
[[ $mapped -ge 3 && $failures -ge 4 && $bytes -gt 0 ]] ||
  fail "stats: files_mapped $mapped (want >= 3), infer_failures $failures (want >= 4), bytes_mapped $bytes: $(cat "$CKPTFWD_STATS_FILE")"
ok "stats count mapped files and inference failures"

restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "every file, malformed ones included, restored byte for byte"
