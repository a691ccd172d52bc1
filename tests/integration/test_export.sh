#!/usr/bin/env bash
# ckptfwd export: one variable of a checkpoint as one numpy array, against the arrays numpy
# and h5py read from the files a run without the library wrote. Checked:
#   - the demo's per-rank raw files under examples/demo.schema (its `at [rank*nz][0][0] in
#     [nranks*nz][ny][nx]` rule): the export of each variable equals the global field
#     numpy assembles from the ranks' files, element for element (to a file, and to stdout
#     for numpy.load), decoding under 60 % of the checkpoint's bytes;
#   - placements that overlap, leave holes, or put a block outside the global shape are
#     refused with the reason, and the blocks come out stacked by rank, exact; `rank` in a
#     placement is the launcher's rank when the file has no field of that name;
#   - a file holding the whole variable (h5py) exports as that variable;
#   - usage errors and a failed write leave nothing behind.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
APP=$BUILD/bin/stencil3d
[[ -x $APP ]] || skip "$APP not built (needs MPICH)"
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || skip "/usr/bin/python3 lacks numpy or h5py"
ckf_std_dirs

# Rules for the hostile runs (each in its own directory, its variables named apart so an
# export takes only that run's files), before the demo's own rule.
HDR='char magic[8]; int32 version; int32 rank; int32 nranks; int32 nx; int32 ny; int32 nz; int64 step'
cat >"$T/hostile.schema" <<EOS
file "*/overlap/ckpt_*_r*.bin*"
  $HDR
  float64 t_overlap[nz][ny][nx] at [0][0][0] in [nranks*nz][ny][nx]
  float64 c_overlap[nz][ny][nx]; uint64 checksum
file "*/holes/ckpt_*_r*.bin*"
  $HDR
  float64 t_holes[nz][ny][nx] at [rank*nz][0][0] in [nranks*nz + 1][ny][nx]
  float64 c_holes[nz][ny][nx]; uint64 checksum
file "*/outside/ckpt_*_r*.bin*"
  $HDR
  float64 t_outside[nz][ny][nx] at [rank*nz + 1][0][0] in [nranks*nz][ny][nx]
  float64 c_outside[nz][ny][nx]; uint64 checksum
file "*/byrank/ckpt_*_r*.bin*"
  char magic[8]; int32 version; int32 writer; int32 nranks; int32 nx; int32 ny; int32 nz; int64 step
  float64 t_byrank[nz][ny][nx] at [rank*nz][0][0] in [nranks*nz][ny][nx]
  float64 c_byrank[nz][ny][nx]; uint64 checksum
EOS
"$CLI" schema check "$T/hostile.schema" >/dev/null || fail "the test's schema does not parse"

demo() {  # DIR SIZE... -- [under the library]
  local dir=$1 nx=$2 ny=$3 nz=$4
  shift 4
  mkdir -p "$dir"
  timeout 120 mpiexec.mpich -n 4 "$@" "$APP" --size "$nx" "$ny" "$nz" --steps 4 --ckpt-every 2 \
    --ckpt-dir "$dir" --quiet >"$T/app.out" 2>&1 || fail "stencil3d in $dir failed: $(tail -5 "$T/app.out")"
}
LIBENV=(env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_CHUNK=64K
  CKPTFWD_SCHEMA="$T/hostile.schema:$CKF_REPO/examples/demo.schema")
demo "$DIRECT" 32 32 16
demo "$CAP" 32 32 16 "${LIBENV[@]}"
for d in overlap holes outside byrank; do
  demo "$DIRECT/$d" 12 10 4
  demo "$CAP/$d" 12 10 4 "${LIBENV[@]}"
done
drain

# check.py NPY VAR MODE FILES...: NPY (a path, or - for stdin) equals the demo files'
# VAR assembled along z (MODE global) or stacked by rank (MODE stacked), bit for bit.
cat >"$T/check.py" <<'PY'
import io, sys
import numpy as np
npy, var, mode, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
# numpy.load needs a seekable file: stdin through BytesIO; a file memory-mapped.
got = np.load(io.BytesIO(sys.stdin.buffer.read())) if npy == "-" else np.load(npy, mmap_mode="r")
blocks = {}
for path in files:
    h = np.fromfile(path, dtype="<i4", count=8, offset=8)
    rank, nx, ny, nz = int(h[1]), int(h[3]), int(h[4]), int(h[5])
    n = nx * ny * nz
    k = 0 if var.startswith("t") else 1
    blocks[rank] = np.fromfile(path, dtype="<f8", count=n, offset=40 + 8 * n * k).reshape(nz, ny, nx)
ordered = [blocks[r] for r in sorted(blocks)]
want = np.concatenate(ordered, axis=0) if mode == "global" else np.stack(ordered)
assert got.dtype == np.dtype("<f8"), got.dtype
assert got.shape == want.shape, (got.shape, want.shape)
assert np.array_equal(got.view("u8"), want.view("u8")), "values differ"
print("ok", got.shape)
PY
jget() { /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j[sys.argv[2]])' "$@"; }

"$CLI" export "$STORE" --var temperature --to "$T/t.npy" --json >"$T/t.json" 2>"$T/err" ||
  fail "export temperature exited $?: $(cat "$T/err")"
/usr/bin/python3 "$T/check.py" "$T/t.npy" temperature global "$DIRECT"/ckpt_4_r*.bin >/dev/null 2>"$T/cmp" ||
  fail "the exported temperature is not numpy's global field: $(tail -2 "$T/cmp")"
[[ $(jget "$T/t.json" assembled) == True ]] || fail "not assembled: $(cat "$T/t.json")"
grep -q "assembled 64x32x32, the 4 files' blocks tile 64x32x32" "$T/err" || fail "stderr: $(cat "$T/err")"
decoded=$(jget "$T/t.json" decoded_bytes)
file_bytes=$(jget "$T/t.json" file_bytes)
[[ $decoded -gt 0 && $((decoded * 10)) -lt $((file_bytes * 6)) ]] ||
  fail "export of one variable of two decoded $decoded of $file_bytes bytes"
ok "temperature of the latest checkpoint: the global 64x32x32 field, exact (decoded $decoded of $file_bytes bytes)"
"$CLI" ls "$STORE" --vars >"$T/vars.txt" 2>&1 || fail "ls --vars failed"
grep -q "^temperature_F64LE_Array3D .* 16x32x32 (each) in 64x32x32$" "$T/vars.txt" ||
  fail "ls --vars does not show the global shape: $(grep temperature "$T/vars.txt")"

"$CLI" export "$STORE" --var concentration --step 2 --to - 2>"$T/err" |
  /usr/bin/python3 "$T/check.py" - concentration global "$DIRECT"/ckpt_2_r*.bin >/dev/null 2>"$T/cmp" ||
  fail "export --to - of concentration at step 2: $(tail -2 "$T/cmp") $(cat "$T/err")"
"$CLI" export "$STORE" --var temperature --rank 2 --to "$T/r2.npy" 2>/dev/null || fail "export --rank 2 failed"
/usr/bin/python3 - "$T/r2.npy" "$DIRECT/ckpt_4_r2.bin" <<'PY' || fail "export --rank 2 is not rank 2's block"
import sys
import numpy as np
got = np.load(sys.argv[1])
want = np.fromfile(sys.argv[2], dtype="<f8", count=32 * 32 * 16, offset=40).reshape(16, 32, 32)
assert got.shape == (16, 32, 32) and np.array_equal(got.view("u8"), want.view("u8"))
PY
ok "--to - reads with numpy.load; --step and --rank pick the checkpoint and the block"

# --slice: numpy's basic slicing of the array made (global or stacked), as numpy slices it.
cat >"$T/slice.py" <<'PY'
import sys
import numpy as np
got, want_from, sl = np.load(sys.argv[1]), np.load(sys.argv[2]), sys.argv[3]
want = eval("want_from[" + sl + "]")
assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
assert np.array_equal(got.view("u1"), np.ascontiguousarray(want).view("u1"))
PY
for sl in "10:50:3,::-1,5" "-1" "3,4:-4,::7" ":,:,-3:" "0:0"; do
  "$CLI" export "$STORE" --var temperature --slice "$sl" --to "$T/ts.npy" --json >"$T/ts.json" 2>"$T/err" ||
    fail "export --slice $sl exited $?: $(cat "$T/err")"
  /usr/bin/python3 "$T/slice.py" "$T/ts.npy" "$T/t.npy" "$sl" 2>"$T/cmp" ||
    fail "export --slice $sl is not numpy's t[$sl]: $(tail -2 "$T/cmp")"
done
[[ $(jget "$T/ts.json" slice) == 0:0 ]] || fail "--json lacks the slice: $(cat "$T/ts.json")"
rc=0
"$CLI" export "$STORE" --var temperature --slice "1,2,3,4" --to "$T/bad.npy" 2>"$T/err" || rc=$?
[[ $rc -eq 1 && ! -e $T/bad.npy ]] && grep -q "names 4 dimensions of an array of 3" "$T/err" ||
  fail "a slice of too many dimensions: exit $rc, $(cat "$T/err")"
rc=0
"$CLI" export "$STORE" --var temperature --slice "1::0" --to "$T/bad.npy" 2>"$T/err" || rc=$?
[[ $rc -eq 2 ]] && grep -q "a step of 0" "$T/err" || fail "a step of 0: exit $rc, $(cat "$T/err")"
ok "--slice gives numpy's slice of the global array (steps, negative positions, indices, empty)"

# hostile VAR REASON: the export stacks the blocks by rank, exact, naming REASON.
hostile() {
  local var=$1 dir=$2 reason=$3
  "$CLI" export "$STORE" --var "$var" --step 4 --to "$T/$var.npy" --json >"$T/$var.json" 2>"$T/err" ||
    fail "export $var exited $?: $(cat "$T/err")"
  grep -qF "not assembled, stacked by rank into 4x4x10x12, $reason" "$T/err" || fail "export $var: $(cat "$T/err")"
  [[ $(jget "$T/$var.json" assembled) == False ]] || fail "$var assembled"
  /usr/bin/python3 "$T/check.py" "$T/$var.npy" "$var" stacked "$DIRECT/$dir"/ckpt_4_r*.bin >/dev/null 2>"$T/cmp" ||
    fail "the stacked $var differs: $(tail -2 "$T/cmp")"
}
hostile t_overlap overlap "the blocks of files 0 and 1 overlap"
hostile t_holes holes "the blocks hold 1920 of the global array's 2040 elements (holes)"
hostile t_outside outside "1 of the 4 files have no placement"
ok "overlapping, holed and outside placements are refused with the reason and stacked by rank, exact"

# --to OUT.h5: the same arrays as HDF5 datasets with their attributes, read by h5py: the
# global field as /temperature; blocks that do not tile, one dataset per rank.
if [[ -x $BUILD/bin/ckptfwd-h5export ]]; then
  "$CLI" export "$STORE" --var temperature --to "$T/t.h5" 2>"$T/err" || fail "export --to t.h5: $(cat "$T/err")"
  "$CLI" export "$STORE" --var t_overlap --step 4 --to "$T/ov.h5" 2>"$T/err" || fail "export --to ov.h5: $(cat "$T/err")"
  "$CLI" export "$STORE" --var temperature --slice "::2,5" --to "$T/ts.h5" 2>"$T/err" || fail "export --slice --to ts.h5: $(cat "$T/err")"
  /usr/bin/python3 - "$T" "$STORE" "$CAP" <<'PY' || fail "the .h5 exports differ from the .npy ones or lack their attributes"
import sys
import h5py
import numpy as np
T, store, cap = sys.argv[1:]
with h5py.File(T + "/t.h5", "r") as f:
    d = f["temperature"]
    assert np.array_equal(d[()].view("u8"), np.load(T + "/t.npy").view("u8")) and d.dtype == np.dtype("<f8")
    a = d.attrs
    assert a["assembled"] == 1 and "tile 64x32x32" in a["how"], dict(a)
    assert list(a["ranks"]) == [0, 1, 2, 3] and list(a["source_paths"]) == ["%s/ckpt_4_r%d.bin" % (cap, r) for r in range(4)], dict(a)
    assert a["dtype"] == "F64LE" and a["ckptfwd_key"] == "temperature_F64LE_Array3D" and a["store"] == store, dict(a)
    assert "lossy_bound" not in a and "slice" not in a
with h5py.File(T + "/ov.h5", "r") as f:
    stacked = np.load(T + "/t_overlap.npy")
    assert sorted(f["t_overlap"].keys()) == ["r0000", "r0001", "r0002", "r0003"], list(f["t_overlap"].keys())
    for r in range(4):
        d = f["t_overlap/r%04d" % r]
        assert np.array_equal(d[()].view("u8"), stacked[r].view("u8")), r
        assert d.attrs["assembled"] == 0 and "overlap" in d.attrs["how"] and list(d.attrs["ranks"]) == [r]
with h5py.File(T + "/ts.h5", "r") as f:
    d = f["temperature"]
    assert np.array_equal(d[()], np.load(T + "/t.npy")[::2, 5]) and d.attrs["slice"] == "::2,5"
PY
  ok "--to OUT.h5: h5py reads the global field, the per-rank blocks and the slice, with their attributes"
  # --var GLOB: every variable it matches (key or name) into one .h5, each as alone.
  "$CLI" export "$STORE" --var '[tc]*' --step 4 --to "$T/all.h5" --json >"$T/all.json" 2>"$T/err" ||
    fail "export --var '[tc]*' --to all.h5: $(cat "$T/err")"
  /usr/bin/python3 - "$T" <<'PY' || fail "export of a glob into one .h5 differs from the single exports"
import json, sys
import h5py
import numpy as np
T = sys.argv[1]
lines = [json.loads(l) for l in open(T + "/all.json")]
keys = sorted(j["key"] for j in lines)
assert keys == sorted(["temperature_F64LE_Array3D", "concentration_F64LE_Array3D", "t_overlap_F64LE_Array3D",
                       "c_overlap_F64LE_Array3D", "t_holes_F64LE_Array3D", "c_holes_F64LE_Array3D",
                       "t_outside_F64LE_Array3D", "c_outside_F64LE_Array3D", "t_byrank_F64LE_Array3D",
                       "c_byrank_F64LE_Array3D", "checksum_U64LE_Scalar"]), keys
with h5py.File(T + "/all.h5", "r") as f:
    assert np.array_equal(f["temperature"][()], np.load(T + "/t.npy"))
    for r in range(4):
        assert np.array_equal(f["t_overlap/r%04d" % r][()], np.load(T + "/t_overlap.npy")[r])
    assert f["concentration"].attrs["assembled"] == 1
PY
  rc=0
  "$CLI" export "$STORE" --var '[tc]*' --step 4 --to "$T/all.npy" 2>"$T/err" || rc=$?
  [[ $rc -eq 1 && ! -e $T/all.npy ]] && grep -q "matches 11 variables .*a .npy holds one: --to OUT.h5 or OUT.nc" "$T/err" ||
    fail "a glob of several variables into a .npy: exit $rc, $(cat "$T/err")"
  ok "--var GLOB writes every matching variable into one .h5 (a .npy takes one and says so)"
else
  echo "   (no ckptfwd-h5export: .h5 output not tested)"
fi

# --to OUT.nc: netCDF (CDF-5) read by netCDF4-python and ncdump, and by ckptfwd inspect.
if /usr/bin/python3 -c 'import netCDF4' 2>/dev/null; then
  "$CLI" export "$STORE" --var temperature --to "$T/t.nc" 2>"$T/err" || fail "export --to t.nc: $(cat "$T/err")"
  "$CLI" export "$STORE" --var t_overlap --step 4 --to "$T/ov.nc" 2>"$T/err" || fail "export --to ov.nc: $(cat "$T/err")"
  /usr/bin/python3 - "$T" "$CAP" <<'PY' || fail "the .nc exports differ from the .npy ones or lack their attributes"
import sys
import netCDF4
import numpy as np
T, cap = sys.argv[1:]
with netCDF4.Dataset(T + "/t.nc") as f:
    assert f.data_model == "NETCDF3_64BIT_DATA", f.data_model
    v = f.variables["temperature"]
    v.set_auto_maskandscale(False)
    assert np.array_equal(v[:], np.load(T + "/t.npy")) and v.dtype == np.dtype("f8"), v
    assert "tile 64x32x32" in v.getncattr("how") and v.getncattr("dtype") == "F64LE"
    assert v.getncattr("source_paths").split("\n") == ["%s/ckpt_4_r%d.bin" % (cap, r) for r in range(4)]
    assert list(np.atleast_1d(v.getncattr("ranks"))) == [0, 1, 2, 3] and v.getncattr("assembled") == 1
with netCDF4.Dataset(T + "/ov.nc") as f:
    stacked = np.load(T + "/t_overlap.npy")
    assert sorted(f.variables) == ["t_overlap_r0000", "t_overlap_r0001", "t_overlap_r0002", "t_overlap_r0003"], list(f.variables)
    for r in range(4):
        v = f.variables["t_overlap_r%04d" % r]
        v.set_auto_maskandscale(False)
        assert np.array_equal(v[:], stacked[r]) and v.getncattr("assembled") == 0
PY
  if command -v ncdump >/dev/null; then
    ncdump -h "$T/t.nc" >"$T/ncdump.txt" 2>&1 || fail "ncdump -h t.nc: $(cat "$T/ncdump.txt")"
    grep -q "double temperature(temperature_d0, temperature_d1, temperature_d2)" "$T/ncdump.txt" || fail "ncdump: $(cat "$T/ncdump.txt")"
  fi
  "$CLI" inspect --json "$T/t.nc" >"$T/inspect.json" || fail "ckptfwd inspect t.nc failed"
  grep -q '"source":"netcdf"' "$T/inspect.json" || fail "inspect does not read t.nc as netCDF: $(head -c 300 "$T/inspect.json")"
  ok "--to OUT.nc: netCDF4 and ncdump read the global field and the per-rank blocks, with their attributes"
fi

"$CLI" export "$STORE" --var t_byrank --step 4 --to "$T/byrank.npy" 2>"$T/err" || fail "export t_byrank: $(cat "$T/err")"
grep -q " assembled 16x10x12" "$T/err" || fail "t_byrank not assembled: $(cat "$T/err")"
/usr/bin/python3 "$T/check.py" "$T/byrank.npy" t_byrank global "$DIRECT/byrank"/ckpt_4_r*.bin >/dev/null 2>"$T/cmp" ||
  fail "t_byrank differs: $(tail -2 "$T/cmp")"
ok "rank in a placement is the launcher's rank where the file has no field of that name"

# A file holding the whole variable (h5py, no rank): exported as that variable.
cat >"$T/h5write.py" <<'PY'
import sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("grid/P", data=np.random.default_rng(7).normal(1e5, 50, (40, 30)).astype(">f4"))
    f.create_dataset("grid/id", data=np.arange(1200, dtype="i8").reshape(40, 30))
PY
mkdir -p "$DIRECT/hdf" "$CAP/hdf"
/usr/bin/python3 "$T/h5write.py" "$DIRECT/hdf/whole.h5" || fail "h5py could not write"
with_lib /usr/bin/python3 "$T/h5write.py" "$CAP/hdf/whole.h5" || fail "h5py under the library failed"
drain
for var in grid/P /grid/id; do
  "$CLI" export "$STORE" --var "$var" --step - --to "$T/h5.npy" 2>"$T/err" || fail "export $var: $(cat "$T/err")"
  grep -q "one file holds the whole variable" "$T/err" || fail "export $var: $(cat "$T/err")"
  /usr/bin/python3 - "$T/h5.npy" "$DIRECT/hdf/whole.h5" "$var" <<'PY' || fail "export $var differs from h5py's"
import sys
import h5py, numpy as np
got = np.load(sys.argv[1])
want = h5py.File(sys.argv[2], "r")[sys.argv[3].lstrip("/")][...]
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape)
assert np.array_equal(got, want)
PY
done
ok "an h5py file's big-endian float32 and int64 datasets export as h5py reads them"
if /usr/bin/python3 -c 'import netCDF4' 2>/dev/null; then
  "$CLI" export "$STORE" --var grid/P --step - --to "$T/p.nc" 2>"$T/err" || fail "export --to p.nc: $(cat "$T/err")"
  "$CLI" export "$STORE" --var /grid/id --step - --to "$T/id.nc" 2>"$T/err" || fail "export --to id.nc: $(cat "$T/err")"
  /usr/bin/python3 - "$T" "$DIRECT/hdf/whole.h5" <<'PY' || fail "the big-endian float32 or int64 .nc export differs from h5py's"
import sys
import h5py, netCDF4
import numpy as np
T, h5 = sys.argv[1:]
with h5py.File(h5, "r") as f, netCDF4.Dataset(T + "/p.nc") as p, netCDF4.Dataset(T + "/id.nc") as i:
    for nc, name, var in ((p, "grid_P", "grid/P"), (i, "grid_id", "grid/id")):
        v = nc.variables[name]
        v.set_auto_maskandscale(False)
        want = f[var][()]
        assert v.dtype.itemsize == want.dtype.itemsize and np.array_equal(v[:], want), name
PY
  ok "--to OUT.nc: float32 (big-endian in the file) and int64 datasets as h5py reads them"
fi

# A variable opted into lossy compression (CKPTFWD_LOSSY, its own job and store): the
# export says the bound, its JSON carries it, and every value is within it of the direct
# run's; the variable not opted in is exact and says nothing of loss.
LOSSY=$T/lossy
mkdir -p "$LOSSY"
(
  export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-lossy
  demo "$LOSSY" 32 32 16 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$LOSSY/*" CKPTFWD_CHUNK=64K \
    CKPTFWD_SCHEMA="$CKF_REPO/examples/demo.schema" CKPTFWD_LOSSY='temperature*=abs:0.001'
  drain
) || fail "the lossy run failed"
"$CLI" export "$LOSSY/.ckptfwd" --var temperature --to "$T/tl.npy" --json >"$T/tl.json" 2>"$T/err" ||
  fail "export of the lossy temperature exited $?: $(cat "$T/err")"
grep -q "stored lossy (CKPTFWD_LOSSY): every value within an absolute 0.001 of the one written" "$T/err" ||
  fail "export does not say the bound: $(cat "$T/err")"
/usr/bin/python3 - "$T/tl.npy" "$T/t.npy" "$T/tl.json" <<'PY' || fail "the lossy export is not within its bound"
import json, sys
import numpy as np
got, exact, j = np.load(sys.argv[1]), np.load(sys.argv[2]), json.load(open(sys.argv[3]))
lossy = j["lossy"]
assert lossy and lossy["mode"] == "abs" and abs(lossy["bound"] - 0.001) < 1e-12, lossy
err = np.abs(got - exact)
assert got.shape == exact.shape and err.max() <= 0.001, err.max()
assert err.max() <= lossy["max_err"] * (1 + 1e-12), (err.max(), lossy["max_err"])
assert not np.array_equal(got, exact), "nothing was lost: the rule did not apply"
print("max error", err.max())
PY
"$CLI" export "$LOSSY/.ckptfwd" --var concentration --to "$T/cl.npy" --json >"$T/cl.json" 2>"$T/err" ||
  fail "export of concentration exited $?: $(cat "$T/err")"
[[ $(jget "$T/cl.json" lossy) == None ]] && ! grep -q lossy "$T/err" || fail "concentration said lossy: $(cat "$T/err")"
/usr/bin/python3 "$T/check.py" "$T/cl.npy" concentration global "$DIRECT"/ckpt_4_r*.bin >/dev/null ||
  fail "concentration of the lossy run is not exact"
if [[ -x $BUILD/bin/ckptfwd-h5export ]]; then
  "$CLI" export "$LOSSY/.ckptfwd" --var temperature --to "$T/tl.h5" 2>"$T/err" || fail "export lossy --to tl.h5: $(cat "$T/err")"
  /usr/bin/python3 - "$T/tl.h5" "$T/tl.npy" <<'PY' || fail "the lossy .h5 export lacks its bound"
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r") as f:
    a = f["temperature"].attrs
    assert a["lossy_mode"] == "abs" and abs(a["lossy_bound"] - 0.001) < 1e-12 and a["lossy_max_err"] <= a["lossy_bound"], dict(a)
    assert np.array_equal(f["temperature"][()], np.load(sys.argv[2]))
PY
fi
ok "a lossy variable exports with its bound (JSON, stderr, .h5 attributes), every value within it; the other exact"

rc=0
"$CLI" export "$STORE" --var temperature --to - --json >/dev/null 2>"$T/err" || rc=$?
[[ $rc -eq 2 ]] || fail "--json with --to - exited $rc, not 2"
rc=0
"$CLI" export "$STORE" --var temperature >/dev/null 2>"$T/err" || rc=$?
[[ $rc -eq 2 ]] && grep -q "needs --to" "$T/err" || fail "no --to: exit $rc, $(cat "$T/err")"
rc=0
"$CLI" export "$STORE" --var pressure --to "$T/p.npy" 2>"$T/err" || rc=$?
[[ $rc -eq 1 && ! -e $T/p.npy ]] || fail "export of an unknown variable: exit $rc"
grep -q "no file of the checkpoint holds a variable pressure" "$T/err" || fail "unknown variable: $(cat "$T/err")"
rc=0
"$CLI" export "$STORE" --var temperature --to "$T/no/such/dir/t.npy" 2>"$T/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "cannot create $T/no/such/dir/t.npy.tmp" "$T/err" || fail "unwritable --to: exit $rc, $(cat "$T/err")"
[[ -z $(find "$T" -maxdepth 1 -name '*.tmp.*') ]] || fail "export left a temporary file"
ok "usage errors exit 2; an unknown variable or an unwritable OUT exit 1 and leave nothing"
echo "PASS: test_export"
