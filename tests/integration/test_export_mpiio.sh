#!/usr/bin/env bash
# Global arrays written through MPI-IO file views (tests/mpiio/mpiio_global_arrays.c, 4
# ranks of MPICH: subarray views in C and Fortran order, a block-block darray after a text
# header, a resized subarray), captured by libckptfwd-mpich.so: the forwarder learns each
# view's global array from its filetype, so `ckptfwd ls --vars` lists them with their
# global shapes and dtypes, and `ckptfwd export` of each equals, element for element, the
# array numpy reads from the file a run without the library wrote (at the view's
# displacement, in the shape the view gives, reversed for Fortran order).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
APP=$BUILD/bin/mpiio_global_arrays
[[ -x $APP ]] || skip "$APP not built (needs mpicc.mpich)"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "/usr/bin/python3 lacks numpy"
ckf_std_dirs

timeout 60 mpiexec.mpich -n 4 "$APP" "$DIRECT" >"$T/direct.out" 2>&1 || fail "direct run failed: $(tail -5 "$T/direct.out")"
timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich -n 4 "$APP" "$CAP" >"$T/cap.out" 2>&1 ||
  fail "mpiio_global_arrays under libckptfwd-mpich.so exited $?: $(tail -5 "$T/cap.out")"
drain

# same_as_numpy NPY FILE OFFSET NUMPY_DTYPE SHAPE: NPY holds, bit for bit, the array of
# that shape numpy reads from FILE at OFFSET.
same_as_numpy() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
import numpy as np
got = np.load(sys.argv[1])
shape = tuple(int(x) for x in sys.argv[5].split(","))
want = np.fromfile(sys.argv[2], dtype=sys.argv[4], count=int(np.prod(shape)), offset=int(sys.argv[3])).reshape(shape)
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
assert np.array_equal(got.view("u1"), want.view("u1"))
PY
}

# FILE KEY OFFSET NUMPY_DTYPE SHAPE: the array the view of KEY describes (grid 2x2 for
# the 2-D ones, 2x2x1 for the 3-D one: MPI_Dims_create of 4 ranks).
CASES=(
  "sub2d_c.dat mpiio/array0_F64LE_Array2D 0 <f8 12,10"
  "sub3d_f.dat mpiio/array0_F32LE_Array3D 0 <f4 2,6,8"
  "hdr_arrays.dat mpiio/array0_I32LE_Array2D 128 <i4 16,12"
  "hdr_arrays.dat mpiio/array1_F64LE_Array2D 896 <f8 6,14"
)
"$CLI" ls "$STORE" --vars >"$T/vars.txt" 2>&1 || fail "ls --vars failed: $(cat "$T/vars.txt")"
for c in "${CASES[@]}"; do
  read -r file key off dt shape <<<"$c"
  grep -q "^$key .* ${shape//,/x}\$" "$T/vars.txt" || fail "ls --vars lacks $key of shape $shape: $(cat "$T/vars.txt")"
done
grep -q "128 B  $CAP/hdr_arrays.dat$" "$T/vars.txt" || fail "the header is not the residual of hdr_arrays.dat: $(grep hdr_arrays "$T/vars.txt")"
ok "ls --vars: the four views' global arrays with their shapes; the text header residual"

for c in "${CASES[@]}"; do
  read -r file key off dt shape <<<"$c"
  "$CLI" export "$STORE" --var "$key" --file "$CAP/$file" --to "$T/out.npy" 2>"$T/err" ||
    fail "export $key of $file exited $?: $(cat "$T/err")"
  grep -q "one file holds the whole variable" "$T/err" || fail "export $key: $(cat "$T/err")"
  same_as_numpy "$T/out.npy" "$DIRECT/$file" "$off" "$dt" "$shape" ||
    fail "export $key of $file differs from numpy's read of the file"
done
ok "export of each view's array equals numpy's read of the direct file (C and Fortran order, darray, resized)"

# The same program with its 4 ranks split over two simulated nodes: every file is shared
# across nodes, so each node's forwarder commits its ranks' bytes as an overlay and no
# stored map describes the file; export stacks the layers and finds the views' arrays in
# the views both layers recorded.
CAP2=$T/cap2
mkdir -p "$CAP2"
export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-2n
timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAP2/*" mpiexec.mpich \
  -n 2 -env CKPTFWD_NODE_ID n0 "$APP" "$CAP2" : -n 2 -env CKPTFWD_NODE_ID n1 "$APP" "$CAP2" \
  >"$T/cap2.out" 2>&1 || fail "mpiio_global_arrays on two simulated nodes exited $?: $(tail -5 "$T/cap2.out")"
CKPTFWD_NODE_ID=n0 drain
CKPTFWD_NODE_ID=n1 drain
"$CLI" ls "$CAP2/.ckptfwd" --json >"$T/ls2.json" || fail "ls of the two-node store failed"
/usr/bin/python3 -c '
import json, sys
files = json.load(open(sys.argv[1]))["files"]
assert files and all(f["overlays"] >= 1 for f in files), [(f["path"], f["overlays"]) for f in files]
' "$T/ls2.json" || fail "the two-node run's files are not overlays: $(cat "$T/ls2.json")"
for c in "${CASES[@]}"; do
  read -r file key off dt shape <<<"$c"
  "$CLI" export "$CAP2/.ckptfwd" --var "$key" --file "$CAP2/$file" --to "$T/out2.npy" 2>"$T/err2" ||
    fail "export $key of $file written from two nodes exited $?: $(cat "$T/err2")"
  grep -q "written from several nodes: its [0-9]* layers stacked" "$T/err2" ||
    fail "export $key of $file: no word of its stacked layers: $(cat "$T/err2")"
  same_as_numpy "$T/out2.npy" "$DIRECT/$file" "$off" "$dt" "$shape" ||
    fail "export $key of $file written from two nodes differs from numpy's read of the file"
done
ok "two simulated nodes: export of each view's array of the stacked overlays equals numpy's read of the direct file"
rc=0
"$CLI" export "$CAP2/.ckptfwd" --var mpiio/array0_F64LE_Array2D --file "$CAP2/sub2d_c.dat" --rank 1 --to "$T/r1.npy" 2>"$T/err2" || rc=$?
[[ $rc -eq 1 ]] && grep -q "written by rank 1" "$T/err2" && ! grep -q "layers stacked" "$T/err2" ||
  fail "--rank of a file several nodes wrote: exit $rc, $(cat "$T/err2")"
ok "two simulated nodes: --rank R skips the shared files (no one rank wrote them) without stacking them"
"$CLI" ls "$CAP2/.ckptfwd" --vars -l --json >"$T/lsl.json" 2>"$T/lsl.err" || fail "ls --vars -l of the two-node store: $(cat "$T/lsl.err")"
/usr/bin/python3 - "$T/lsl.json" "$DIRECT/sub2d_c.dat" "$CAP2/sub2d_c.dat" <<'PY' || fail "ls --vars -l does not show the stacked file's array and its range"
import json, sys
import numpy as np
ls, direct, path = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
k = [x for x in ls["keys"] if x["key"] == "mpiio/array0_F64LE_Array2D" and any(s["path"] == path for s in x["shapes"])]
assert k, [x["key"] for x in ls["keys"]]
a = np.fromfile(direct, dtype="<f8")
assert [s["shape"] for s in k[0]["shapes"] if s["path"] == path] == [[12, 10]]
assert len(k[0]["shapes"]) == 1 and k[0]["count"] == a.size and k[0]["min"] == a.min() and k[0]["max"] == a.max(), k[0]
f = [x for x in ls["files"] if x["path"] == path][0]
assert f["source"] == "mpiio", f
PY
ok "two simulated nodes: ls --vars -l infers the stacked files' arrays, with numpy's min and max"
echo "PASS: test_export_mpiio"
