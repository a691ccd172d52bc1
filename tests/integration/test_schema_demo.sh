#!/usr/bin/env bash
# The demo schema describes the demo's checkpoints exactly: stencil3d runs WITHOUT the
# library (2 ranks, a small grid, two checkpoints, values dumped as text by
# --dump-values), then `ckptfwd schema check examples/demo.schema FILE --json` splits each
# rank file; the extents and the residual cover the file exactly once, and every typed
# variable decodes (numpy, the dtype and offsets of the map) to the values the program
# printed from memory. A schema with wrong sizes gives "does not fit" and exit 1; a syntax
# error gives FILE:LINE:COL and exit 2.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
APP=$BUILD/bin/stencil3d
SCHEMA=$CKF_REPO/examples/demo.schema
[[ -x "$APP" ]] || skip "$APP not built (needs MPICH)"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "/usr/bin/python3 has no numpy"

timeout 120 mpiexec.mpich -n 2 "$APP" --size 5 4 3 --steps 4 --ckpt-every 2 --ckpt-dir "$T/ckpt" \
  --dump-values "$T/values" --quiet >"$T/app.out" 2>&1 || fail "stencil3d failed: $(tail -5 "$T/app.out")"
files=$(find "$T/ckpt" -name 'ckpt_*_r*.bin' | sort)
[[ $(wc -w <<<"$files") -eq 4 ]] || fail "expected 4 checkpoint files, found: $files"

for f in $files; do
  "$CLI" schema check "$SCHEMA" "$f" --json >"$f.json" 2>"$T/check.err" ||
    fail "schema check of $f exited $?: $(cat "$T/check.err")"
  /usr/bin/python3 - "$f" "$f.json" "$T/values/$(basename "$f" .bin).txt" <<'PY' || fail "the split of $f is wrong (see above)"
import json, sys
import numpy as np
path, map_path, values_path = sys.argv[1:4]
data = open(path, "rb").read()
m = json.load(open(map_path))
assert m["source"] == "schema", m["source"]
assert m["size"] == len(data), (m["size"], len(data))

# Every byte exactly once: by an extent or by the residual.
cover = np.zeros(len(data), dtype=np.int64)
mapped = 0
for v in m["vars"]:
    for e in v["extents"]:
        assert e["offset"] + e["length"] <= len(data), (v["name"], e)
        cover[e["offset"]:e["offset"] + e["length"]] += 1
        mapped += e["length"]
assert cover.max(initial=0) <= 1, "extents overlap at byte %d" % int(np.argmax(cover > 1))
assert mapped + m["residual_bytes"] == len(data), (mapped, m["residual_bytes"], len(data))
assert (cover == 0).sum() == m["residual_bytes"]

# What the program printed from memory, field by field.
want = {}
for line in open(values_path):
    name, *vals = line.split()
    want[name] = vals
numpy_type = {"CHAR": "i1", "I32LE": "<i4", "I64LE": "<i8", "U64LE": "<u8", "F64LE": "<f8"}
seen = set()
for v in m["vars"]:
    name = v["name"]
    assert v["key"] == "%s_%s_%s" % (name, v["dtype"], "Scalar" if not v["shape"] else "Array%dD" % len(v["shape"])), v["key"]
    assert len(v["extents"]) == 1, (name, v["extents"])
    e = v["extents"][0]
    arr = np.frombuffer(data, dtype=numpy_type[v["dtype"]], count=e["length"] // v["elem_size"],
                        offset=e["offset"])
    assert arr.itemsize == v["elem_size"], name
    assert list(arr.shape) == [int(np.prod(v["shape"]))], (name, arr.shape, v["shape"])
    assert name in want, "variable %s is not a field the program wrote" % name
    if v["dtype"] == "F64LE":
        expect = np.array([float(x) for x in want[name]], dtype=np.float64)
        same = np.array_equal(arr.view(np.uint64), expect.view(np.uint64))  # bit for bit
    else:
        expect = np.array([int(x) for x in want[name]], dtype=arr.dtype)
        same = np.array_equal(arr, expect)
    assert same, "%s: decoded %s..., program wrote %s..." % (name, arr[:4], want[name][:4])
    seen.add(name)
assert seen == set(want), "fields the program wrote but the map lacks: %s" % (set(want) - seen)
t = next(v for v in m["vars"] if v["name"] == "temperature")
nz, ny, nx = (int(want[k][0]) for k in ("nz", "ny", "nx"))
assert t["shape"] == [nz, ny, nx], t["shape"]
print("ok: %s: %d variables, %d bytes, values as written" % (path.split("/")[-1], len(seen), len(data)))
PY
done
ok "the demo schema splits every rank file exactly, values decode to what stencil3d wrote"

# The same layout with a wrong size: the temperature field is one plane short.
sed 's/temperature\[nz\]/temperature[nz - 1]/' "$SCHEMA" >"$T/wrong.schema"
one=$(head -n 1 <<<"$files")
set +e
"$CLI" schema check "$T/wrong.schema" "$one" >"$T/wrong.out" 2>"$T/wrong.err"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "a schema with a wrong size: exit $rc, want 1 ($(cat "$T/wrong.err"))"
grep -q "does not fit: .*bytes left over at offset [0-9]* after the last field" "$T/wrong.out" ||
  fail "a schema with a wrong size: no does-not-fit reason with offset: $(cat "$T/wrong.out" "$T/wrong.err")"
ok "a wrong size gives the reason ($(grep -o 'does not fit: .*' "$T/wrong.out")) and exit 1"

# A syntax error: the position of the bad token.
sed 's/^  int64    step/  int64    step[/' "$SCHEMA" >"$T/syntax.schema"
line=$(grep -n 'step\[$' "$T/syntax.schema" | cut -d: -f1)
[[ -n "$line" ]] || fail "could not make the syntax error (no 'int64 step' line in $SCHEMA)"
col=$(( $(sed -n "${line}p" "$T/syntax.schema" | wc -c) ))  # the line end after the '['
set +e
"$CLI" schema check "$T/syntax.schema" "$one" >"$T/syntax.out" 2>"$T/syntax.err"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "a syntax error: exit $rc, want 2"
grep -qx "$T/syntax.schema:$line:$col: expected a number, a field name or '(', found end of line" "$T/syntax.err" ||
  fail "a syntax error: want $T/syntax.schema:$line:$col: ..., got: $(cat "$T/syntax.err")"
ok "a syntax error gives FILE:LINE:COL ($(cat "$T/syntax.err"))"
echo "PASS: test_schema_demo"
