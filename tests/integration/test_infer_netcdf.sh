#!/usr/bin/env bash
# netCDF classic structure inference (src/schema/netcdf_classic.h) against the netCDF
# library's own view of real files.
#
# ncgen writes classic (CDF-1), 64-bit offset (CDF-2) and CDF-5 files from CDL written
# here (fixed variables of every classic type incl. char, a 3-D fixed and 3-D record
# variable, four record variables over three records; a file with one record variable of
# an odd size, whose records are not padded; CDF-5's unsigned and 64-bit types), and
# nccopy copies each into the same kind. For every file `ckptfwd inspect --json` must give
# a map whose names, dtypes and shapes are what `ncdump -h` says, whose extents and
# residual cover the file exactly once, and whose extents hold, decoded big endian, the
# values `ncdump -p 9,17` prints (9 and 17 significant digits give floats and doubles back
# exactly). Truncated and bit-flipped copies must give an exit status 0 and either no map
# (source "") or a valid one.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd ncgen ncdump nccopy
PY=/usr/bin/python3  # Debian's, with numpy (the first python3 on PATH may lack it)
[[ -x $PY ]] && $PY -c 'import numpy' 2>/dev/null || skip "$PY with numpy not found"
# Until the CLI has `inspect` there is nothing to run the parser through.
"$CLI" inspect --help >/dev/null 2>&1 || skip "$CLI has no inspect command"

D=$T/files
mkdir -p "$D"

cat >"$T/ckpt.cdl" <<'EOF'
netcdf ckpt {
dimensions:
  time = UNLIMITED ;
  lat = 3 ;
  lon = 4 ;
  lev = 2 ;
  nchar = 7 ;
variables:
  char label(nchar) ;
  short idx(lat) ;
  int step ;
  float lat(lat) ;
    lat:units = "degrees_north" ;
  double lon(lon) ;
  byte mask(lev, lat, lon) ;
  double time(time) ;
    time:units = "seconds" ;
  float temp(time, lat, lon) ;
    temp:valid_range = -1000.f, 1000.f ;
  short level(time, lev) ;
  char tag(time, nchar) ;
  :title = "ckptfwd inference test" ;
data:
  label = "restart" ;
  idx = -1, 300, -32000 ;
  step = 123456789 ;
  lat = -45.5, 0.1, 60.25 ;
  lon = 0, 1e-300, 3.141592653589793, -2.5e10 ;
  mask = 1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12,
         13, -14, 15, -16, 17, -18, 19, -20, 21, -22, 23, -128 ;
  time = 0.5, 1.1, 2.2 ;
  temp = 0.1, 0.2, 0.3, 1e-20, 3.4e37, -7.77, 8, 9, 10, 11, 12, 13,
         1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5,
         -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, 123.456 ;
  level = 1, -2, 3, -4, 5, 32767 ;
  tag = "rec0abc", "rec1def", "rec2ghi" ;
}
EOF
# One record variable of 6 bytes a record: records follow each other without padding.
cat >"$T/single.cdl" <<'EOF'
netcdf single {
dimensions:
  t = UNLIMITED ;
  n = 3 ;
variables:
  short v(t, n) ;
  int fixed(n) ;
data:
  v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
  fixed = 7, 8, 9 ;
}
EOF
cat >"$T/types5.cdl" <<'EOF'
netcdf types5 {
dimensions:
  t = UNLIMITED ;
  n = 3 ;
variables:
  ubyte ub(n) ;
  ushort us(n) ;
  uint ui(n) ;
  int64 i64(n) ;
    i64:offset = -5LL ;
  uint64 u64(t, n) ;
  float f(t) ;
data:
  ub = 0, 128, 255 ;
  us = 0, 40000, 65534 ;
  ui = 0, 3000000000, 4294967294 ;
  i64 = -9000000000000000000, 1, 9000000000000000000 ;
  u64 = 0, 1, 18000000000000000000, 5, 6, 7 ;
  f = 1.5, -2.25 ;
}
EOF

declare -A DETAIL=([classic]=CDF-1 ["64-bit offset"]=CDF-2 [cdf5]=CDF-5)
FILES=()
for kind in classic "64-bit offset" cdf5; do
  k=${kind// /_}
  for cdl in ckpt single; do
    ncgen -k "$kind" -b -o "$D/${cdl}_$k.nc" "$T/$cdl.cdl" || fail "ncgen -k '$kind' $cdl.cdl failed"
    FILES+=("$D/${cdl}_$k.nc")
  done
done
# ncgen 4.9.0 writes CDL int64 variables of a CDF-5 file as int, so the CDF-5 types go
# through a netCDF-4 file and nccopy (ncdump below says what the file really holds).
ncgen -k nc4 -b -o "$T/types5.nc4" "$T/types5.cdl" || fail "ncgen -k nc4 types5.cdl failed"
nccopy -k cdf5 "$T/types5.nc4" "$D/types5_cdf5.nc" || fail "nccopy -k cdf5 of types5 failed"
FILES+=("$D/types5_cdf5.nc")
for f in "${FILES[@]}"; do
  kind=$(ncdump -k "$f")
  nccopy -k "$kind" "$f" "${f%.nc}_copy.nc" || fail "nccopy -k '$kind' $f failed"
  FILES+=("${f%.nc}_copy.nc")
done

# check.py FILE MAP_JSON [--any]: the map against the netCDF library's view of FILE; with
# --any only that a map, if there is one, is valid for the file (corrupted copies).
cat >"$T/check.py" <<'EOF'
import json, os, re, subprocess, sys
import numpy as np

path, map_path = sys.argv[1], sys.argv[2]
any_map = "--any" in sys.argv[3:]
data = open(path, "rb").read()
size = len(data)
with open(map_path) as f:
    lines = [l for l in f.read().splitlines() if l.strip()]
if len(lines) != 1:
    sys.exit(f"inspect printed {len(lines)} lines on stdout, expected one JSON object")
m = json.loads(lines[0])
if m.get("size") != size:
    sys.exit(f"map size {m.get('size')} != file size {size}")

DTYPE = {"I8": "i1", "U8": "u1", "CHAR": "S1", "I16BE": ">i2", "U16BE": ">u2",
         "I32BE": ">i4", "U32BE": ">u4", "I64BE": ">i8", "U64BE": ">u8",
         "F32BE": ">f4", "F64BE": ">f8"}

# Extents and residual cover the file exactly once.
pieces = sorted((e["offset"], e["length"], v["name"]) for v in m["vars"]
                for e in v.get("extents", []))
at = 0
for off, length, name in pieces:
    if length <= 0 or off < at or off + length > size:
        sys.exit(f"extent [{off}, {off + length}) of {name} overlaps the one before "
                 f"(ends at {at}) or lies outside the file ({size} bytes)")
    at = off + length
mapped = sum(p[1] for p in pieces)
if m["residual_bytes"] != size - mapped:
    sys.exit(f"residual {m['residual_bytes']} + mapped {mapped} != size {size}")
if any_map:
    sys.exit(0)

# The library's view: kind, dimensions, variables.
kind = subprocess.run(["ncdump", "-k", path], capture_output=True, text=True,
                      check=True).stdout.strip()
want_detail = {"classic": "CDF-1", "64-bit offset": "CDF-2", "cdf5": "CDF-5"}[kind]
if m["source"] != "netcdf" or m["detail"] != want_detail:
    sys.exit(f"source/detail {m['source']!r}/{m['detail']!r}, expected netcdf/{want_detail} "
             f"(ncdump -k: {kind})")
header = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True,
                        check=True).stdout
dims, nc_vars, section = {}, {}, None
for line in header.splitlines():
    if line in ("dimensions:", "variables:"):
        section = line
        continue
    if section == "dimensions:":
        mm = re.match(r"^\t(\w+) = (UNLIMITED ; // \((\d+) currently\)|(\d+) ;)$", line)
        if mm:
            dims[mm.group(1)] = int(mm.group(3) or mm.group(4))
    elif section == "variables:":
        mm = re.match(r"^\t(\w+) (\w+)(?:\(([^)]*)\))? ;$", line)
        if mm:
            nc_vars[mm.group(2)] = (mm.group(1), [d.strip() for d in (mm.group(3) or "").split(",")
                                                  if d.strip()])
NC_TYPE = {"byte": "I8", "char": "CHAR", "short": "I16BE", "int": "I32BE", "float": "F32BE",
           "double": "F64BE", "ubyte": "U8", "ushort": "U16BE", "uint": "U32BE",
           "int64": "I64BE", "uint64": "U64BE"}
got = {v["name"]: v for v in m["vars"]}
if sorted(got) != sorted(nc_vars):
    sys.exit(f"variables {sorted(got)} != ncdump's {sorted(nc_vars)}")
for name, (t, vdims) in nc_vars.items():
    v = got[name]
    shape = [dims[d] for d in vdims]
    cls = "Scalar" if not shape else f"Array{len(shape)}D"
    if v["dtype"] != NC_TYPE[t] or v["shape"] != shape or v["key"] != f"{name}_{NC_TYPE[t]}_{cls}":
        sys.exit(f"{name}: map {v['key']} {v['dtype']} {v['shape']}, ncdump {t} {vdims} = {shape}")

# The values: ncdump's data section, one statement `name = v, v, ... ;` per variable.
dump = subprocess.run(["ncdump", "-p", "9,17", "-v", ",".join(nc_vars), path],
                      capture_output=True, text=True, check=True).stdout
body = dump[dump.index("\ndata:\n") + 7:dump.rindex("}")]
tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[^\s,;=]+|[;=]', body)
values, i = {}, 0
while i < len(tokens):
    name, eq = tokens[i], tokens[i + 1]
    if eq != "=":
        sys.exit(f"cannot parse ncdump data near {tokens[i:i + 5]}")
    j = tokens.index(";", i + 2)
    values[name] = tokens[i + 2:j]
    i = j + 1
ESC = {"n": "\n", "t": "\t", "0": "\0", '"': '"', "\\": "\\"}
checked = 0
for name, (t, vdims) in nc_vars.items():
    v = got[name]
    exts = sorted(v["extents"], key=lambda e: e["start"])
    raw = b"".join(data[e["offset"]:e["offset"] + e["length"]] for e in exts)
    n = int(np.prod(v["shape"], dtype=np.uint64)) if v["shape"] else 1
    if len(raw) != n * v["elem_size"]:
        sys.exit(f"{name}: extents hold {len(raw)} bytes, shape {v['shape']} needs "
                 f"{n * v['elem_size']}")
    toks = values.get(name, [])
    if t == "char":
        row = v["shape"][-1] if v["shape"] else 1
        want = b""
        for s in toks:
            s = re.sub(r"\\(.)", lambda c: ESC.get(c.group(1), c.group(1)), s[1:-1])
            want += s.encode("latin-1").ljust(row, b"\0")
    else:
        if "_" in toks:
            sys.exit(f"{name}: ncdump shows fill values; the test data should set every value")
        conv = float if t in ("float", "double") else int
        want = np.array([conv(x) for x in toks], dtype=DTYPE[v["dtype"]]).tobytes()
    if raw != want:
        sys.exit(f"{name}: bytes from the map {raw[:64].hex()} != ncdump's values {toks[:8]} "
                 f"({want[:64].hex()})")
    checked += n
print(f"{os.path.basename(path)}: {len(nc_vars)} variables, {checked} values, "
      f"{len(pieces)} extents, {m['residual_bytes']} residual bytes")
EOF

inspect() {  # inspect FILE OUT: `ckptfwd inspect FILE --json` >OUT, its stderr in OUT.err
  timeout 60 "$CLI" inspect "$1" --json >"$2" 2>"$2.err"
}

for f in "${FILES[@]}"; do
  name=$(basename "$f" .nc)
  inspect "$f" "$T/$name.json" || fail "ckptfwd inspect $f exited $?: $(tail -3 "$T/$name.json.err")"
  out=$($PY "$T/check.py" "$f" "$T/$name.json" 2>&1) ||
    fail "$name: $out (map: $(head -c 600 "$T/$name.json"))"
  ok "$out"
done
[[ ${#FILES[@]} -eq 14 ]] || fail "expected 14 files, made ${#FILES[@]}"

# Corrupted copies of the files ncgen wrote: cut in the header, cut one byte into the last
# variable data, and 8 single-bit flips in the header each.
cat >"$T/corrupt.py" <<'EOF'
import json, random, sys
src, map_path, out = sys.argv[1:4]
data = open(src, "rb").read()
m = json.loads(open(map_path).read())
starts = [e["offset"] for v in m["vars"] for e in v["extents"]]
ends = [e["offset"] + e["length"] for v in m["vars"] for e in v["extents"]]
header_end = min(starts)
rng = random.Random(src)
open(f"{out}.cut_header", "wb").write(data[:header_end // 2])
open(f"{out}.cut_data", "wb").write(data[:max(ends) - 1])
for k in range(8):
    b = bytearray(data)
    pos = rng.randrange(header_end)
    b[pos] ^= 1 << rng.randrange(8)
    open(f"{out}.flip{k:02d}", "wb").write(bytes(b))
EOF
n_bad=0 n_mapped=0
for f in "${FILES[@]}"; do
  [[ $f == *_copy.nc ]] && continue
  name=$(basename "$f" .nc)
  mkdir -p "$T/bad"
  $PY "$T/corrupt.py" "$f" "$T/$name.json" "$T/bad/$name" || fail "corrupt.py $f failed"
  for g in "$T/bad/$name".*; do
    [[ $g == *.json* ]] && continue
    inspect "$g" "$g.json" || fail "ckptfwd inspect of corrupted $g exited $?: $(tail -3 "$g.json.err")"
    # variable_map_json puts "source" first after "file", as a plain string.
    src=$(sed -nE '1s/^\{"file":"[^"]*","source":"([^"]*)".*\}$/\1/p' "$g.json")
    [[ -n $src || $(head -c 200 "$g.json") == *'"source":""'* ]] ||
      fail "ckptfwd inspect of $g printed no JSON object: $(head -c 300 "$g.json")"
    if [[ $g == *.cut_* ]]; then
      [[ -z $src ]] || fail "truncated $g was mapped (source '$src'): $(head -c 300 "$g.json")"
      grep -q '"detail":"netCDF classic: ' "$g.json" ||
        fail "truncated $g: the detail does not say why the header was rejected: $(head -c 300 "$g.json")"
    elif [[ -n $src ]]; then
      out=$($PY "$T/check.py" "$g" "$g.json" --any 2>&1) || fail "bit-flipped $g: $out"
      n_mapped=$((n_mapped + 1))
    fi
    n_bad=$((n_bad + 1))
  done
done
ok "$n_bad truncated and bit-flipped files: ckptfwd inspect exits 0, rejects every truncated one, $n_mapped flipped ones mapped validly"
echo "PASS: test_infer_netcdf"
