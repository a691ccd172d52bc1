#!/usr/bin/env bash
# Structure inference cost, as part of make bench: how long the forwarder's inference takes
# against what committing the same bytes costs anyway (zstd -3 of the file, one thread, and
# reading it once). Two inputs the design names:
#   - an HDF5 file with 1,000 datasets (h5py, 10 groups x 100 datasets of 4 KiB), the worst
#     case for the HDF5 helper (one object walk, one query per dataset);
#   - a ~1 GiB netCDF 64-bit-offset file (ncgen header, 170 records of two record
#     variables appended), the worst case for the classic parser (one extent per record).
# `ckptfwd inspect` runs the same Inferrer as the forwarder, helper process included; its
# time is the median of BENCH_INFER_REPS (default 5) runs, process start included.
# Prints a table, writes BENCH_DIR/infer.json and BENCH_DIR/infer.svg; asserts nothing about
# time. Checks that each map covers what the tools say (variable counts).
#   tools/bench/bench_infer.sh BUILD [WORK]
set -uo pipefail
BUILD=$(cd "${1:-build}" && pwd) || exit 2
WORK=${2:-$BUILD/bench}
CLI=$BUILD/bin/ckptfwd
REPS=${BENCH_INFER_REPS:-5}
mkdir -p "$WORK/infer" || exit 2
D=$WORK/infer
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "bench_infer: needs python3-h5py for /usr/bin/python3 (make deps)" >&2; exit 2; }
command -v ncgen >/dev/null || { echo "bench_infer: needs ncgen (make deps)" >&2; exit 2; }

/usr/bin/python3 - "$D/many.h5" <<'PY' || exit 1
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    for g in range(10):
        grp = f.create_group(f"g{g}")
        for d in range(100):
            grp.create_dataset(f"d{d}", data=np.full(512, g * 100 + d, dtype=np.float64))
PY
cat >"$D/big.cdl" <<'CDL'
netcdf big {
dimensions:
  time = UNLIMITED ;
  y = 512 ;
  x = 1024 ;
variables:
  float temp(time, y, x) ;
  double pres(time, y, x) ;
  int mask(y, x) ;
}
CDL
ncgen -k 64-bit-offset -b -o "$D/big.nc" "$D/big.cdl" || exit 1
# 170 records (6 MiB each: 2 MiB of temp, 4 MiB of pres) of smooth data, numrecs set.
/usr/bin/python3 - "$D/big.nc" 170 <<'PY' || exit 1
import sys, struct, numpy as np
path, n = sys.argv[1], int(sys.argv[2])
y, x = np.mgrid[0:512, 0:1024]
with open(path, "r+b") as f:
    f.seek(4); f.write(struct.pack(">I", n)); f.seek(0, 2)
    for r in range(n):
        t = (280 + 10 * np.sin(x / 50 + r / 10) * np.cos(y / 40)).astype(">f4")
        p = (1e5 + 500 * np.cos(x / 70 - r / 7) + y).astype(">f8")
        f.write(t.tobytes()); f.write(p.tobytes())
PY
ncdump -h "$D/big.nc" >"$D/big.header" && grep -q 'UNLIMITED ; // (170 currently)' "$D/big.header" || { echo "bench_infer: big.nc is not what ncdump expects" >&2; exit 1; }

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
time_cmd() {  # REPS CMD...: median seconds
  local n=$1 i t0 t1
  shift
  for ((i = 0; i < n; i++)); do
    t0=$(now); "$@" >/dev/null 2>&1 || { echo "bench_infer: failed: $*" >&2; return 1; }; t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f\n", b-a}'
  done | median
}

printf '%-34s %10s %9s %11s %11s %11s %9s %9s\n' "input" "size MiB" "vars" "infer ms" "ms per GiB" "zstd-3 ms" "read ms" "infer/zs"
json="["
rows=()
for f in many.h5 big.nc; do
  p=$D/$f
  "$CLI" inspect --json "$p" >"$D/$f.json" || { echo "bench_infer: inspect $p failed" >&2; exit 1; }
  nvars=$(/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len(m["vars"]), m["source"])' "$D/$f.json")
  case $f in
    many.h5) [[ $nvars == "1000 hdf5" ]] || { echo "bench_infer: many.h5 mapped as '$nvars', expected 1000 hdf5" >&2; exit 1; } ;;
    big.nc) [[ $nvars == "3 netcdf" ]] || { echo "bench_infer: big.nc mapped as '$nvars', expected 3 netcdf" >&2; exit 1; } ;;
  esac
  cat "$p" >/dev/null
  ti=$(time_cmd "$REPS" "$CLI" inspect "$p") || exit 1
  tz=$(time_cmd 1 sh -c "zstd -3 -T1 -q -c '$p' >/dev/null") || exit 1
  tr=$(time_cmd "$REPS" sh -c "cat '$p' >/dev/null") || exit 1
  size=$(stat -c %s "$p")
  row=$(awk -v f="$f" -v s="$size" -v n="${nvars% *}" -v ti="$ti" -v tz="$tz" -v tr="$tr" 'BEGIN{
    printf "%-34s %10.1f %9d %11.2f %11.2f %11.1f %9.1f %9.3f", f, s/1048576, n, ti*1000, ti*1000/(s/1073741824), tz*1000, tr*1000, ti/tz }')
  echo "$row"
  json+=$(awk -v f="$f" -v s="$size" -v n="${nvars% *}" -v ti="$ti" -v tz="$tz" -v tr="$tr" 'BEGIN{
    printf "{\"input\":\"%s\",\"bytes\":%d,\"vars\":%d,\"infer_s\":%.6f,\"zstd3_s\":%.6f,\"read_s\":%.6f,\"infer_over_zstd\":%.4f},", f, s, n, ti, tz, tr, ti/tz }')
  rows+=("$f $ti $tz")
done
echo "${json%,}]" >"$D/../infer.json"
echo "  infer ms: median of $REPS runs of 'ckptfwd inspect FILE' (process start and, for HDF5,"
echo "  the helper process included); zstd-3 ms: zstd -3 -T1 of the same file (what committing"
echo "  compresses anyway); infer/zs: the share inference adds to that. JSON: $D/../infer.json"
# A two-bar-per-input SVG: inference and zstd -3 times, log-free, scaled to the largest.
{
  echo '<svg xmlns="http://www.w3.org/2000/svg" width="520" height="220" font-family="sans-serif" font-size="12">'
  echo '<text x="10" y="18">Structure inference vs zstd -3 of the same file (ms)</text>'
  max=$(printf '%s\n' "${rows[@]}" | awk '{if ($2>m) m=$2; if ($3>m) m=$3} END {print m}')
  y=40
  for r in "${rows[@]}"; do
    read -r name ti tz <<<"$r"
    awk -v n="$name" -v ti="$ti" -v tz="$tz" -v m="$max" -v y="$y" 'BEGIN{
      wi = 360*ti/m; wz = 360*tz/m
      printf "<text x=\"10\" y=\"%d\">%s</text>\n", y+12, n
      printf "<rect x=\"100\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#d62728\"/><text x=\"%.1f\" y=\"%d\">infer %.1f</text>\n", y, wi, 104+wi, y+12, ti*1000
      printf "<rect x=\"100\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#1f77b4\"/><text x=\"%.1f\" y=\"%d\">zstd -3 %.1f</text>\n", y+20, wz, 104+wz, y+32, tz*1000 }'
    y=$((y + 70))
  done
  echo '</svg>'
} >"$D/../infer.svg"
echo "  plot: $D/../infer.svg"
