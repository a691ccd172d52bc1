#!/usr/bin/env bash
# Real netCDF clients (Debian netcdf-bin) under the library, compared with runs without it.
#
# `ncgen -b` writes a captured netCDF file from data_x.cdl, once as classic CDF-1 (with a
# record variable, whose records interleave) and once as netCDF-4 (an HDF5 file);
# `ncdump` through the library must print what it prints for the direct file, `nccopy`
# through the library must read it, and the restored bytes must equal the direct run's
# (ncgen output is byte-deterministic for both kinds, checked when this test was written).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd ncgen ncdump nccopy

HERE=$(cd "$(dirname "$0")" && pwd)
DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*.nc"

for kind in classic nc4; do
  ncgen -k $kind -b -o "$DIRECT/x_$kind.nc" "$HERE/data_x.cdl" || fail "ncgen -k $kind without the library failed"
  with_lib ncgen -k $kind -b -o "$CAP/x_$kind.nc" "$HERE/data_x.cdl" 2>"$T/ncgen.err" ||
    fail "ncgen -k $kind under the library failed: $(tail -5 "$T/ncgen.err")"
  [[ ! -f "$CAP/x_$kind.nc" ]] || fail "$CAP/x_$kind.nc is a regular file on disk: not captured"

  ncdump "$DIRECT/x_$kind.nc" >"$T/$kind.dump.direct" || fail "ncdump of the direct x_$kind.nc failed"
  with_lib ncdump "$CAP/x_$kind.nc" >"$T/$kind.dump.lib" 2>"$T/ncdump.err" ||
    fail "ncdump $CAP/x_$kind.nc under the library failed: $(tail -5 "$T/ncdump.err")"
  diff "$T/$kind.dump.direct" "$T/$kind.dump.lib" >"$T/$kind.dump.diff" ||
    fail "ncdump of x_$kind.nc differs under the library: $(head -10 "$T/$kind.dump.diff")"
  grep -q 'temp = *$' "$T/$kind.dump.lib" || fail "ncdump output has no temp data: $(head -5 "$T/$kind.dump.lib")"

  # nccopy reads the captured file through the library and writes an uncaptured copy.
  with_lib nccopy "$CAP/x_$kind.nc" "$T/copy_$kind.cdf" 2>"$T/nccopy.err" ||
    fail "nccopy of the captured x_$kind.nc failed: $(tail -5 "$T/nccopy.err")"
  [[ -f "$T/copy_$kind.cdf" ]] || fail "nccopy's uncaptured output $T/copy_$kind.cdf is not a regular file"
  ncdump "$T/copy_$kind.cdf" | sed 1d >"$T/$kind.copy.dump"
  sed 1d "$T/$kind.dump.direct" | diff - "$T/$kind.copy.dump" >/dev/null || fail "nccopy of the captured x_$kind.nc has different content"
  ok "ncgen -k $kind, ncdump and nccopy under the library match the direct run"
done

drain
STORE=$CAP/.ckptfwd
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify failed: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "restored netCDF files are sha256-identical to the direct run"
