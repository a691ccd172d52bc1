#!/usr/bin/env bash
# ckptfwd dump: one variable's values out of a store, from the chunks that hold it, against
# the files a run without the library wrote, read by numpy (the demo's raw checkpoints, by
# their documented layout) and by h5py (per-rank HDF5 files). Checked:
#   - --stats (--json): per file and in all the elements, NaNs, min and max numpy gives,
#     and its mean to 1e-12;
#   - --csv: every value, exactly, at its index; the default text: one row per line;
#   - --step and --rank pick the checkpoint and the file; one variable of two decodes
#     under 60 % of the checkpoint's bytes;
#   - an unknown variable, a missing step and a bad option are refused, naming the fix.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
APP=$BUILD/bin/stencil3d
[[ -x $APP ]] || skip "$APP not built (needs MPICH)"
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || skip "/usr/bin/python3 lacks numpy or h5py"
ckf_std_dirs

# The demo on 4 ranks, 32x32x16 cells each, checkpoints after steps 2 and 4.
demo() {  # DIR [under the library]
  local dir=$1
  shift
  timeout 120 mpiexec.mpich -n 4 "$@" "$APP" --size 32 32 16 --steps 4 --ckpt-every 2 \
    --ckpt-dir "$dir" --quiet >"$T/app.out" 2>&1 || fail "stencil3d in $dir failed: $(tail -5 "$T/app.out")"
}
demo "$DIRECT"
# Chunks of 64 KiB: a variable's 128 KiB per file is not in a chunk shared with the other
# variable or the other checkpoint (4 MiB chunks would hold the whole store of this small run).
demo "$CAP" env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_CHUNK=64K \
  CKPTFWD_SCHEMA="$CKF_REPO/examples/demo.schema"
drain

# oracle.py MODE VAR FILES...: numpy's view of the demo's raw files (header of 40 bytes,
# then temperature and concentration as float64 [nz][ny][nx], x fastest).
cat >"$T/oracle.py" <<'PY'
import json, sys
import numpy as np
mode, var, files = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(path):
    h = np.fromfile(path, dtype="<i4", count=8, offset=8)
    rank, nx, ny, nz = int(h[1]), int(h[3]), int(h[4]), int(h[5])
    n = nx * ny * nz
    k = ["temperature", "concentration"].index(var)
    return rank, np.fromfile(path, dtype="<f8", count=n, offset=40 + 8 * n * k).reshape(nz, ny, nx)
if mode == "stats":
    out = []
    for f in files:
        rank, a = load(f)
        out.append({"rank": rank, "count": int(a.size), "nans": int(np.isnan(a).sum()),
                    "min": float(np.nanmin(a)), "max": float(np.nanmax(a)), "mean": float(np.nanmean(a))})
    allv = np.concatenate([load(f)[1].ravel() for f in files])
    out.append({"rank": "all", "count": int(allv.size), "nans": int(np.isnan(allv).sum()),
                "min": float(np.nanmin(allv)), "max": float(np.nanmax(allv)), "mean": float(np.nanmean(allv))})
    print(json.dumps(out))
else:  # csv lines "rank,k,j,i,value" of every element, values as Python reads them back
    for f in files:
        rank, a = load(f)
        for (k, j, i), v in np.ndenumerate(a):
            print("%d,%d,%d,%d,%r" % (rank, k, j, i, float(v)))
PY
# compare_stats DUMP_JSON ORACLE_JSON: every file and "all" agree.
cat >"$T/compare_stats.py" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1])); want = json.load(open(sys.argv[2]))
got = [dict(f) for f in dump["files"]] + [dict(dump["all"], rank="all")]
by_rank = {w["rank"]: w for w in want}
assert len(got) == len(want), (len(got), len(want))
for g in got:
    w = by_rank[g["rank"]]
    for k in ("count", "nans", "min", "max"):
        assert g[k] == w[k], (g["rank"], k, g[k], w[k])
    assert abs(g["mean"] - w["mean"]) <= 1e-12 * abs(w["mean"]), (g["rank"], g["mean"], w["mean"])
print("ok")
PY

"$CLI" dump "$STORE" temperature --stats --json >"$T/stats.json" 2>"$T/dump.err" ||
  fail "dump --stats exited $?: $(cat "$T/dump.err")"
grep -q "reading checkpoint 4: 4 files" "$T/dump.err" || fail "dump did not take the latest checkpoint: $(cat "$T/dump.err")"
/usr/bin/python3 "$T/oracle.py" stats temperature "$DIRECT"/ckpt_4_r*.bin >"$T/want.json"
/usr/bin/python3 "$T/compare_stats.py" "$T/stats.json" "$T/want.json" >/dev/null 2>"$T/cmp.err" ||
  fail "dump --stats differs from numpy's: $(tail -2 "$T/cmp.err")"
ok "dump --stats of the latest checkpoint equals numpy's per file and in all"

"$CLI" dump "$STORE" concentration --step 2 --stats --json >"$T/stats2.json" 2>"$T/dump.err" ||
  fail "dump --step 2 exited $?: $(cat "$T/dump.err")"
/usr/bin/python3 "$T/oracle.py" stats concentration "$DIRECT"/ckpt_2_r*.bin >"$T/want2.json"
/usr/bin/python3 "$T/compare_stats.py" "$T/stats2.json" "$T/want2.json" >/dev/null 2>"$T/cmp.err" ||
  fail "dump --step 2 --stats differs from numpy's: $(tail -2 "$T/cmp.err")"
read -r decoded file_bytes < <(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["decoded_bytes"], j["file_bytes"])' "$T/stats2.json")
[[ $decoded -gt 0 && $((decoded * 10)) -lt $((file_bytes * 6)) ]] ||
  fail "dump of one variable of two decoded $decoded of $file_bytes bytes"
ok "--step picks checkpoint 2; one variable decodes $decoded of its $file_bytes bytes"

"$CLI" dump "$STORE" concentration --step 2 --rank 1 --csv >"$T/dump.csv" 2>"$T/dump.err" ||
  fail "dump --csv exited $?: $(cat "$T/dump.err")"
tail -n +2 "$T/dump.csv" | cut -d, -f2- >"$T/got.csv"
/usr/bin/python3 "$T/oracle.py" csv concentration "$DIRECT/ckpt_2_r1.bin" >"$T/want.csv"
/usr/bin/python3 - "$T/got.csv" "$T/want.csv" <<'PY' || fail "dump --csv differs from numpy's values"
import sys
got = [l.rstrip("\n").split(",") for l in open(sys.argv[1])]
want = [l.rstrip("\n").split(",") for l in open(sys.argv[2])]
assert len(got) == len(want) == 32 * 32 * 16, (len(got), len(want))
for g, w in zip(got, want):
    assert g[:4] == w[:4] and float(g[4]) == float(w[4]), (g, w)
PY
[[ $(cut -d, -f1 "$T/dump.csv" | sort -u | grep -c ckpt_) -eq 1 ]] || fail "--rank 1 printed other files"
"$CLI" dump "$STORE" temperature --rank 3 >"$T/dump.txt" 2>/dev/null || fail "dump (text) failed"
[[ $(grep -c '^(' "$T/dump.txt") -eq $((16 * 32)) ]] || fail "the text form has $(grep -c '^(' "$T/dump.txt") rows, not 512"
head -1 "$T/dump.txt" | grep -q "^# $CAP/ckpt_4_r3.bin rank 3 temperature_F64LE_Array3D 16x32x32$" ||
  fail "the text form's header: $(head -1 "$T/dump.txt")"
ok "--csv gives every value of rank 1's file exactly; the text form one row per line"

# --slice: numpy's a[SLICE] of each file's variable, printed at a's own indices; --stats of
# the slice alone.
SL="3:13:4,-1,::-7"
"$CLI" dump "$STORE" concentration --step 2 --rank 1 --slice "$SL" --csv >"$T/slice.csv" 2>"$T/dump.err" ||
  fail "dump --slice exited $?: $(cat "$T/dump.err")"
"$CLI" dump "$STORE" temperature --slice "$SL" --stats --json >"$T/slice.json" 2>"$T/dump.err" ||
  fail "dump --slice --stats exited $?: $(cat "$T/dump.err")"
/usr/bin/python3 - "$T/slice.csv" "$T/slice.json" "$SL" "$DIRECT" <<'PY' || fail "dump --slice differs from numpy's slice"
import json, sys
import numpy as np
got_csv, got_stats, sl, direct = sys.argv[1:]
def load(path, k):
    h = np.fromfile(path, dtype="<i4", count=8, offset=8)
    nx, ny, nz = int(h[3]), int(h[4]), int(h[5])
    n = nx * ny * nz
    return np.fromfile(path, dtype="<f8", count=n, offset=40 + 8 * n * k).reshape(nz, ny, nx)
a = load(direct + "/ckpt_2_r1.bin", 1)
idx = np.arange(a.size).reshape(a.shape)
want_v, want_i = eval("a[" + sl + "]").ravel(), eval("idx[" + sl + "]").ravel()
rows = [l.rstrip("\n").split(",") for l in open(got_csv)][1:]
assert len(rows) == want_v.size, (len(rows), want_v.size)
for r, v, i in zip(rows, want_v, want_i):
    assert tuple(int(x) for x in r[2:5]) == np.unravel_index(i, a.shape), (r, np.unravel_index(i, a.shape))
    assert float(r[5]) == float(v), (r, v)
st = json.load(open(got_stats))
for f in st["files"]:
    t = eval("load(f['path'].replace(f['path'].rsplit('/', 1)[0], direct), 0)[" + sl + "]")
    assert f["count"] == t.size and f["min"] == t.min() and f["max"] == t.max(), (f, t.min(), t.max())
    assert abs(f["mean"] - t.mean()) <= 1e-12 * abs(t.mean()) and f["slice_shape"] == list(t.shape)
PY
rc=0
"$CLI" dump "$STORE" temperature --slice "99" >/dev/null 2>"$T/dump.err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "index 99 is outside dimension 0 of size 16" "$T/dump.err" ||
  fail "an index outside: exit $rc, $(cat "$T/dump.err")"
ok "--slice $SL: numpy's slice of each file's variable at its own indices, and its --stats"

# ls --vars -l: per key the elements, NaNs, min and max over every live file, as numpy
# gives them over the direct run's files.
"$CLI" ls "$STORE" --vars -l --json >"$T/lsl.json" 2>"$T/ls.err" || fail "ls --vars -l --json exited $?: $(cat "$T/ls.err")"
"$CLI" ls "$STORE" --vars -l >"$T/lsl.txt" 2>"$T/ls.err" || fail "ls --vars -l exited $?: $(cat "$T/ls.err")"
/usr/bin/python3 - "$T/lsl.json" "$T/lsl.txt" "$DIRECT" <<'PY' || fail "ls --vars -l differs from numpy's"
import glob, json, sys
import numpy as np
ls, txt, direct = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
for k, var in enumerate(("temperature", "concentration")):
    vals = []
    for path in sorted(glob.glob(direct + "/ckpt_*_r*.bin")):
        h = np.fromfile(path, dtype="<i4", count=8, offset=8)
        n = int(h[3]) * int(h[4]) * int(h[5])
        vals.append(np.fromfile(path, dtype="<f8", count=n, offset=40 + 8 * n * k))
    a = np.concatenate(vals)
    key = [x for x in ls["keys"] if x["key"] == var + "_F64LE_Array3D"][0]
    assert key["count"] == a.size and key["nans"] == int(np.isnan(a).sum()), key
    assert key["min"] == np.nanmin(a) and key["max"] == np.nanmax(a) and key["unread"] is None, key
    line = [l for l in txt.splitlines() if l.startswith(var + "_F64LE_Array3D ")][0]
    assert "%.6g / %.6g" % (np.nanmin(a), np.nanmax(a)) in line, line
assert "MIN / MAX" in txt.splitlines()[0]
PY
rc=0
"$CLI" ls "$STORE" -l >/dev/null 2>"$T/ls.err" || rc=$?
[[ $rc -eq 2 ]] && grep -q -- "-l goes with --vars" "$T/ls.err" || fail "ls -l without --vars: exit $rc, $(cat "$T/ls.err")"
ok "ls --vars -l: each key's count, NaNs, min and max over the live files equal numpy's"

# Per-rank HDF5 files written by h5py, one process per rank (SLURM_PROCID gives the rank,
# so the store knows state_r<rank>.h5 is rewritten at every checkpoint: checkpoint "-"),
# float32 and int32 datasets in a group.
cat >"$T/h5write.py" <<'PY'
import sys
import h5py, numpy as np
d, r = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(r)
with h5py.File("%s/state_r%d.h5" % (d, r), "w") as f:
    t = rng.normal(280, 5, (8, 12, 10)).astype("f4")
    t[0, 0, r] = np.nan
    f.create_dataset("fields/T", data=t)
    f.create_dataset("fields/cell", data=np.arange(960, dtype="i4").reshape(8, 12, 10) - 100 * r)
PY
for r in 0 1 2; do
  /usr/bin/python3 "$T/h5write.py" "$DIRECT" $r || fail "h5py could not write rank $r's file"
  SLURM_PROCID=$r with_lib /usr/bin/python3 "$T/h5write.py" "$CAP" $r || fail "h5py under the library failed"
done
drain
for var in /fields/T fields/cell; do
  "$CLI" dump "$STORE" "$var" --step - --stats --json >"$T/h5.json" 2>"$T/dump.err" ||
    fail "dump $var exited $?: $(cat "$T/dump.err")"
  /usr/bin/python3 - "$T/h5.json" "$DIRECT" "$var" <<'PY' || fail "dump $var differs from h5py's"
import json, sys
import h5py, numpy as np
j = json.load(open(sys.argv[1])); d, var = sys.argv[2], sys.argv[3]
assert len(j["files"]) == 3, [f["path"] for f in j["files"]]
for f in j["files"]:
    r = int(f["path"].rsplit("_r", 1)[1].split(".")[0])
    a = h5py.File("%s/state_r%d.h5" % (d, r), "r")[var.lstrip("/")][...].astype("f8")
    want = {"count": a.size, "nans": int(np.isnan(a).sum()), "min": float(np.nanmin(a)), "max": float(np.nanmax(a))}
    for k, v in want.items():
        assert f[k] == v, (f["path"], k, f[k], v)
    assert abs(f["mean"] - np.nanmean(a)) <= 1e-9 * abs(np.nanmean(a)) + 1e-12, (f["mean"], np.nanmean(a))
PY
done
ok "dump of h5py's float32 (with a NaN) and int32 datasets equals h5py's arrays"

"$CLI" dump "$STORE" pressure >/dev/null 2>"$T/err" && fail "dump of a variable no file holds succeeded"
grep -q "no file of the checkpoint holds a variable pressure (ckptfwd ls --vars" "$T/err" ||
  fail "unknown variable: $(cat "$T/err")"
"$CLI" dump "$STORE" temperature --step 99 >/dev/null 2>"$T/err" && fail "dump --step 99 succeeded"
grep -q "no checkpoint 99" "$T/err" || fail "missing step: $(cat "$T/err")"
rc=0
"$CLI" dump "$STORE" temperature --json >/dev/null 2>"$T/err" || rc=$?
[[ $rc -eq 2 ]] || fail "--json without --stats exited $rc, not 2 (a usage error)"
ok "unknown variables, missing steps and bad options are refused"
echo "PASS: test_dump"
