#!/usr/bin/env bash
# Records without a stated count, each with its length in a float64 (as an MD code keeps a
# record's length in a double), described by `repeat * { float64 n; ... }`, as a user runs
# it: rank files written by a Python script directly and under the library with
# CKPTFWD_SCHEMA, of two kinds:
#  - blocks of particles (a length, then ids, positions and velocities of that many): each
#    field one variable (struct of arrays), listed by `ckptfwd ls --vars`;
#  - the same records as one flat array (`float64 values[*]`), which the codec's records
#    step splits by field;
#  - a text preamble of any length (`char header[until "END\n"]`) before an array;
#  - per-atom records of 9-12 values: `ckptfwd schema check` splits them exactly but warns
#    that the split is too fine to store by variable, and the forwarder stores them as
#    bytes (such an index made the store several times the size of the files).
# Every file restores byte for byte; files whose last record is cut short or whose length
# is no whole number do not fit (reason, exit 1) and restore exactly too.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "/usr/bin/python3 has no numpy"
ckf_std_dirs
cat >"$T/records.schema" <<'EOF'
# blocks of particles: n, then n ids, n positions and n velocities
file "*/blocks_r*.bin" little_endian
  repeat * {
    float64 n
    int64 ids[n]
    float64 pos[n][3]
    float64 vel[n][3]
  }
# the same records as one flat array: the codec's records step splits them by field
file "*/flat_r*.bin" little_endian
  float64 values[*]
# a text preamble of any length before the arrays
file "*/notes_r*.bin" little_endian
  char header[until "END\n"]
  int32 n
  float64 temperature[n]
# per-atom records: the length counts every value of the record, itself included
file "*/atoms_r*.bin" little_endian
  repeat * {
    float64 len
    float64 type; float64 id
    float64 x; float64 y; float64 z
    float64 vx; float64 vy; float64 vz
    float64 bonds[len - 9]
  }
EOF
export CKPTFWD_SCHEMA=$T/records.schema
cat >"$T/write.py" <<'EOF'
import sys
import numpy as np
out, bad = sys.argv[1], sys.argv[2] == "bad"
rng = np.random.default_rng(7)
for rank in range(4):
    parts = []
    for b in range(20):
        n = int(rng.integers(200, 800))
        parts += [np.array([n], "<f8"), np.arange(n, dtype="<i8") + rank * 100000 + b * 1000,
                  rng.uniform(0, 20, (n, 3)).round(3).astype("<f8"),
                  rng.normal(0, 0.3, (n, 3)).astype("<f8")]
    blocks = b"".join(p.tobytes() for p in parts)
    with open(f"{out}/blocks_r{rank}.bin", "wb") as f:
        f.write(blocks)
    n = 3000
    recs = []
    pos = rng.uniform(0, 20, (n, 3)).round(3)
    vel = rng.normal(0, 0.3, (n, 3))
    for i in range(n):
        nb = int(rng.integers(0, 4))  # 0..3 bonds: records of several lengths
        rec = [9 + nb, 1 + i % 3, rank * n + i, *pos[i], *vel[i],
               *(rank * n + (i + 1 + np.arange(nb)) % n)]
        recs.append(np.array(rec, dtype="<f8"))
    with open(f"{out}/atoms_r{rank}.bin", "wb") as f:
        f.write(np.concatenate(recs).tobytes())
    with open(f"{out}/flat_r{rank}.bin", "wb") as f:  # other positions: not a duplicate
        f.write(np.concatenate([r + np.r_[0, 0, 0, 1.0, 1.0, 1.0, np.zeros(len(r) - 6)]
                                for r in recs]).tobytes())
    t = 280 + rng.normal(0, 2, 5000).cumsum() * 0.01
    with open(f"{out}/notes_r{rank}.bin", "wb") as f:
        f.write(b"# rank %d of 4\n" % rank + b"units K\n" * (rank + 1) + b"END\n")
        f.write(np.array([t.size], "<i4").tobytes() + t.astype("<f8").tobytes())
    if bad and rank == 0:  # the last block cut short; a length that is no whole number
        with open(f"{out}/blocks_r8.bin", "wb") as f:
            f.write(blocks[:-8])
        b = np.frombuffer(blocks, dtype="<f8").copy()
        b[0] += 0.5
        with open(f"{out}/blocks_r9.bin", "wb") as f:
            f.write(b.tobytes())
EOF
/usr/bin/python3 "$T/write.py" "$DIRECT" bad || fail "the direct write failed"
with_lib /usr/bin/python3 "$T/write.py" "$CAP" bad 2>"$T/write.err" ||
  fail "the write under the library failed: $(tail -5 "$T/write.err")"
[[ ! -f "$CAP/blocks_r0.bin" ]] || fail "$CAP/blocks_r0.bin is a regular file on disk: not captured"

"$CLI" schema check "$CKPTFWD_SCHEMA" "$DIRECT/blocks_r1.bin" --json >"$T/check.json" 2>"$T/check.err" ||
  fail "schema check of blocks_r1.bin exited $?: $(cat "$T/check.err")"
[[ ! -s "$T/check.err" ]] || fail "schema check of blocks_r1.bin warned: $(cat "$T/check.err")"
/usr/bin/python3 - "$DIRECT/blocks_r1.bin" "$T/check.json" <<'PY' || fail "the split of blocks_r1.bin is wrong (above)"
import json, sys
import numpy as np
data = open(sys.argv[1], "rb").read()
m = json.load(open(sys.argv[2]))
assert m["source"] == "schema" and m["size"] == len(data), (m["source"], m["size"])
cover = np.zeros(len(data), dtype=np.int64)
for v in m["vars"]:
    for e in v["extents"]:
        cover[e["offset"]:e["offset"] + e["length"]] += 1
assert cover.min() == 1 and cover.max() == 1, "every byte once"
col = {v["name"]: v for v in m["vars"]}
ns, at = [], 0
while at < len(data):
    n = int(np.frombuffer(data, "<f8", 1, at)[0])
    ns.append(n)
    at += 8 + n * (8 + 48)
assert col["n"]["shape"] == [len(ns)] and col["n"]["dtype"] == "F64LE", col["n"]
assert col["ids"]["shape"] == [sum(ns)] and col["ids"]["dtype"] == "I64LE", col["ids"]["shape"]
assert col["pos"]["shape"] == [sum(ns), 3] and col["vel"]["shape"] == [sum(ns), 3], col["pos"]["shape"]
got = np.concatenate([np.frombuffer(data, "<i8", e["length"] // 8, e["offset"])
                      for e in col["ids"]["extents"]])
first = int(got[0]) - int(got[0]) % 100000
want = np.concatenate([first + b * 1000 + np.arange(n) for b, n in enumerate(ns)])
assert np.array_equal(got, want), "ids"
print("ok: %d blocks, %d particles" % (len(ns), sum(ns)))
PY
ok "schema check splits the blocks into one variable per field, every byte once"
"$CLI" schema check "$CKPTFWD_SCHEMA" "$DIRECT/atoms_r1.bin" >/dev/null 2>"$T/fine.err" ||
  fail "schema check of atoms_r1.bin exited $?: $(cat "$T/fine.err")"
grep -q 'too fine to store by variable.*stores this file as bytes.*float64 atoms\[\*\]\[9\].*float64 values\[\*\]' "$T/fine.err" ||
  fail "schema check of atoms_r1.bin: no warning that the split is too fine: $(cat "$T/fine.err")"
ok "per-atom records: $(cut -c1-150 "$T/fine.err")"

for f in blocks_r8.bin blocks_r9.bin; do
  set +e
  "$CLI" schema check "$CKPTFWD_SCHEMA" "$DIRECT/$f" >"$T/bad.out" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 1 ]] || fail "schema check of $f: exit $rc, want 1 ($(cat "$T/bad.out"))"
  grep -q "does not fit: " "$T/bad.out" || fail "schema check of $f: no reason: $(cat "$T/bad.out")"
  ok "$f does not fit: $(grep -o 'does not fit: .*' "$T/bad.out" | head -1 | cut -c1-160)"
done

drain
"$CLI" ls "$STORE" --vars --json >"$T/ls.json" 2>"$T/ls.err" || fail "ckptfwd ls --vars failed: $(cat "$T/ls.err")"
/usr/bin/python3 - "$T/ls.json" "$CAP" <<'PY' || fail "ls --vars does not show the fields (above)"
import json, sys
ls, cap = json.load(open(sys.argv[1])), sys.argv[2]
per_file = {}
for k in ls["keys"]:
    for h in k["shapes"]:
        per_file.setdefault(h["path"], set()).add(k["key"])
for r in range(4):
    keys = per_file.get(f"{cap}/blocks_r{r}.bin", set())
    for key in ("n_F64LE_Array1D", "ids_I64LE_Array1D", "pos_F64LE_Array2D", "vel_F64LE_Array2D"):
        assert key in keys, (r, key, sorted(keys))
    assert f"{cap}/atoms_r{r}.bin" not in per_file, ("a split too fine is not stored", r)
    assert "values_F64LE_Array1D" in per_file.get(f"{cap}/flat_r{r}.bin", set()), r
    assert {"header_CHAR_Array1D", "temperature_F64LE_Array1D"} <= per_file.get(
        f"{cap}/notes_r{r}.bin", set()), (r, per_file.get(f"{cap}/notes_r{r}.bin"))
chains = {k["key"]: k.get("chain", "") for k in ls["keys"]}
assert "records" in chains.get("values_F64LE_Array1D", ""), chains.get("values_F64LE_Array1D")
for r in (8, 9):
    assert f"{cap}/blocks_r{r}.bin" not in per_file, ("a file that does not fit has no map", r)
print("ok: fields of 4 rank files listed")
PY
ok "ls --vars lists each field of the blocks, the flat records coded by records, the preamble files' fields; the per-atom records split too fine and the files that do not fit have no map"
files=$(cat "$DIRECT"/* | wc -c)
stored=$(du -cb "$STORE"/*.ckc | tail -1 | cut -f1)
[[ $stored -lt $files ]] || fail "the store ($stored bytes) is larger than the files ($files bytes)"
ok "the store holds $stored bytes for $files bytes of files"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "every file restores byte for byte"
echo "PASS: test_schema_records"
