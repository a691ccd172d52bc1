#!/usr/bin/env bash
# Real HDF5 clients (Debian hdf5-tools) under the library, compared with runs without it.
#
# h5repack writes a captured .h5 (HDF5 opens it read-write and reads its own metadata back
# through the staged fd); h5dump and h5diff then read it through the library; the restored
# bytes must equal h5repack's output without the library.
#
# Two outputs: plain h5repack copies objects and is byte-deterministic, so its restore is
# compared by sha256 with the direct run. With a filter (-f SHUF -f GZIP) h5repack rewrites
# the datasets and stamps them with the current time (5 bytes differ between any two runs,
# checked when this test was written), so that file is compared by h5diff/h5dump with the
# direct run and by sha256 with what a read through the library returns.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd h5repack h5dump h5diff
/usr/bin/python3 -c 'import h5py' 2>/dev/null || skip "python3-h5py not installed for /usr/bin/python3"

HERE=$(cd "$(dirname "$0")" && pwd)
DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"

/usr/bin/python3 "$HERE/make_h5.py" "$T/input.h5" || fail "make_h5.py could not write the input"

h5repack "$T/input.h5" "$DIRECT/repacked.h5" || fail "h5repack without the library failed"
h5repack -f SHUF -f GZIP=4 "$T/input.h5" "$DIRECT/gzip.h5" || fail "h5repack -f GZIP without the library failed"

with_lib h5repack "$T/input.h5" "$CAP/repacked.h5" 2>"$T/repack.err" ||
  fail "h5repack under the library failed: $(tail -5 "$T/repack.err")"
with_lib h5repack -f SHUF -f GZIP=4 "$T/input.h5" "$CAP/gzip.h5" 2>"$T/repack2.err" ||
  fail "h5repack -f GZIP under the library failed: $(tail -5 "$T/repack2.err")"
[[ ! -f "$CAP/repacked.h5" ]] || fail "$CAP/repacked.h5 is a regular file on disk: not captured"
ok "h5repack wrote two captured files"

# h5dump through the library must print what it prints for the direct file (the file name
# in the first line differs, so it is normalised).
for f in repacked gzip; do
  h5dump "$DIRECT/$f.h5" >"$T/$f.dump.raw" || fail "h5dump of the direct $f.h5 failed"
  sed "s#$DIRECT/##" "$T/$f.dump.raw" >"$T/$f.dump.direct"
  with_lib h5dump "$CAP/$f.h5" >"$T/$f.dump.raw" 2>"$T/$f.dump.err" ||
    fail "h5dump $CAP/$f.h5 under the library failed: $(tail -5 "$T/$f.dump.err")"
  sed "s#$CAP/##" "$T/$f.dump.raw" >"$T/$f.dump.lib"
  diff "$T/$f.dump.direct" "$T/$f.dump.lib" >"$T/$f.dump.diff" ||
    fail "h5dump of $f.h5 differs under the library: $(head -10 "$T/$f.dump.diff")"
  with_lib h5diff "$T/input.h5" "$CAP/$f.h5" >"$T/$f.h5diff" 2>&1 ||
    fail "h5diff input.h5 $CAP/$f.h5 under the library reports differences: $(tail -5 "$T/$f.h5diff")"
done
ok "h5dump and h5diff read both files through the library"

drain
STORE=$CAP/.ckptfwd
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify failed: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"

r=$(restored_file "$OUT" "$CAP/repacked.h5")
[[ -n "$r" ]] || fail "restore did not produce repacked.h5"
assert_same_bytes "$DIRECT/repacked.h5" "$r" "restored repacked.h5"
ok "restored repacked.h5 is sha256-identical to h5repack's direct output"

r=$(restored_file "$OUT" "$CAP/gzip.h5")
[[ -n "$r" ]] || fail "restore did not produce gzip.h5"
h5diff "$DIRECT/gzip.h5" "$r" >"$T/gzip.restored.diff" 2>&1 || fail "restored gzip.h5 differs from the direct run: $(tail -5 "$T/gzip.restored.diff")"
h5dump "$r" >"$T/gzip.dump.raw" || fail "h5dump of the restored gzip.h5 failed"
sed "s#$(dirname "$r")/##" "$T/gzip.dump.raw" | diff "$T/gzip.dump.direct" - >/dev/null ||
  fail "h5dump of restored gzip.h5 differs from the direct run"
with_lib sha256sum "$CAP/gzip.h5" >"$T/gzip.lib.sha" || fail "sha256sum $CAP/gzip.h5 under the library failed"
lib_sha=$(cut -d' ' -f1 "$T/gzip.lib.sha")
[[ "$lib_sha" == "$(sha "$r")" ]] || fail "restored gzip.h5 ($(sha "$r")) differs from a read through the library ($lib_sha)"
ok "restored gzip.h5 equals the direct run (h5diff, h5dump) and the library's read-back (sha256)"
