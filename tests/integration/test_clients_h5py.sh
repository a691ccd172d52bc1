#!/usr/bin/env bash
# python3-h5py under the library: a Python program writes an HDF5 checkpoint and re-reads it
# (values checked in Python), and the restored bytes equal a run without the library.
# make_h5.py keeps object timestamps out of the file (see its docstring), so h5py's output
# is byte-deterministic and sha256 is the oracle. Python's own open()/write() path is covered
# too with a plain binary file.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || skip "python3-h5py/numpy not installed for /usr/bin/python3"

HERE=$(cd "$(dirname "$0")" && pwd)
DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
PYWRITE='import sys, numpy as np
np.arange(100000, dtype=np.float64).tofile(sys.argv[1] + "/state.npy.raw")
with open(sys.argv[1] + "/state.npy.raw", "rb") as f:
    assert f.read() == np.arange(100000, dtype=np.float64).tobytes(), "read-back differs"'

/usr/bin/python3 "$HERE/make_h5.py" "$DIRECT/ckpt.h5" || fail "h5py write without the library failed"
/usr/bin/python3 -c "$PYWRITE" "$DIRECT" || fail "python raw write without the library failed"

with_lib /usr/bin/python3 "$HERE/make_h5.py" "$CAP/ckpt.h5" 2>"$T/py.err" ||
  fail "h5py write under the library failed: $(tail -5 "$T/py.err")"
[[ ! -f "$CAP/ckpt.h5" ]] || fail "$CAP/ckpt.h5 is a regular file on disk: not captured"
with_lib /usr/bin/python3 "$HERE/make_h5.py" "$CAP/ckpt.h5" --check >"$T/check.out" 2>"$T/py.err" ||
  fail "h5py re-read under the library failed: $(tail -5 "$T/py.err")"
[[ $(grep -c ' ok$' "$T/check.out") -eq 5 ]] || fail "h5py re-read checked $(grep -c ' ok$' "$T/check.out") of 5 datasets"
with_lib /usr/bin/python3 -c "$PYWRITE" "$CAP" 2>"$T/py.err" || fail "python raw write/read under the library failed: $(tail -5 "$T/py.err")"
ok "h5py wrote and re-read its file under the library; python open/write/read too"

drain
STORE=$CAP/.ckptfwd
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
/usr/bin/python3 "$HERE/make_h5.py" "$(restored_file "$OUT" "$CAP/ckpt.h5")" --check >/dev/null || fail "restored ckpt.h5 does not read back in h5py"
ok "restored h5py file is sha256-identical to the direct run"
