#!/usr/bin/env bash
# HDF5 structure inference (ckptfwd-h5infer, the helper that reads HDF5 files through the
# serial HDF5 library; schema/hdf5_client.h) against the HDF5 tools' own view of real files,
# parsed at test time (never a hard-coded list):
#   - files made with h5py (/usr/bin/python3: Debian's h5py and numpy): nested groups,
#     chunked + gzip, chunked unfiltered with edge chunks, a sparse extendible dataset,
#     compound, big-endian, fixed and variable-length strings, string attributes, a scalar,
#     25 datasets in one group, a hard link, compact, external and unallocated datasets;
#     the same content in the default, earliest (old-style groups) and latest formats and
#     behind 512- and 1024-byte userblocks; a netCDF-4 file (ncgen -k nc4); the two files
#     of the HDF Group's ph5example run over 4 MPICH ranks through the MPI-IO driver;
#   - each file's map (`ckptfwd inspect FILE --json`, which runs the helper) must agree
#     with h5ls -r -v and h5dump -H -p (names, shapes, dtypes, chunk dims, filters,
#     allocated bytes, layout, contiguous offsets), its extents and the residual must
#     cover the file exactly once, and every extent's bytes
#     must be what the library reads: dataset[()] for contiguous data, read_direct_chunk for
#     each chunk (and the array slice for unfiltered chunks);
#   - hostile input: truncated files are left agnostic, bit-flipped files give no map or a
#     valid one, and two files of tests/integration/data/ that break libhdf5 1.10.8 fail
#     cleanly within CKPTFWD_INFER_TIMEOUT_MS:
#       h5_btree_self_loop_crash.h5  h5py file (earliest format, 300 one-element chunks)
#                                    whose chunk B-tree root has its first child pointing
#                                    at itself: the library recurses until SIGSEGV;
#       h5_btree_fanout_hang.h5      the same file with the nodes made a chain of internal
#                                    nodes whose children all point to the next one:
#                                    billions of chunk visits, a hang.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd h5ls h5dump ncgen
PY=/usr/bin/python3
"$PY" -c 'import h5py, numpy' 2>/dev/null || skip "$PY lacks h5py/numpy (apt install python3-h5py)"
H5INFER=$BUILD/bin/ckptfwd-h5infer
[[ -x "$H5INFER" ]] || fail "$H5INFER is missing: build ckptfwd-h5infer (needs libhdf5-dev)"
DATA=$(cd "$(dirname "$0")/data" && pwd)
F=$T/files
mkdir -p "$F"

# map_json FILE OUT: the file's variable map as `ckptfwd inspect FILE --json` prints it
# (the forwarder's Inferrer, which runs the helper) in OUT, its stderr in OUT.err.
"$CLI" inspect --help >/dev/null 2>&1 || fail "$CLI has no inspect command"
map_json() { "$CLI" inspect "$1" --json >"$2" 2>"$2.err"; }
MAP_VIA="ckptfwd inspect --json"

cat >"$T/check_map.py" <<'PYEOF'
# check_map.py FILE MAP_JSON [DETAIL]: the variable map of FILE against h5ls -r -v,
# h5dump -H -p and the bytes h5py reads; DETAIL: a text the map's detail must contain.
# Prints one line per problem and exits 1 if any, else a summary.
import json, re, subprocess, sys
import h5py, numpy as np

path, map_path = sys.argv[1], sys.argv[2]
m = json.load(open(map_path))
raw = open(path, 'rb').read()
problems = []
def bad(msg): problems.append(msg)

if m.get('source') != 'hdf5':
    sys.exit(f"{path}: source is {m.get('source')!r} ({m.get('detail')!r}), expected 'hdf5'")
if m['size'] != len(raw): bad(f"map size {m['size']} != file size {len(raw)}")
if len(sys.argv) > 3 and sys.argv[3] not in m.get('detail', ''):
    bad(f"detail {m.get('detail')!r} does not say {sys.argv[3]!r}")
vars_ = {v['name']: v for v in m['vars']}
if len(vars_) != len(m['vars']): bad("duplicate variable names")

# Extents and residual cover the file exactly once.
ext = sorted((e['offset'], e['length'], v['name']) for v in m['vars'] for e in v['extents'])
at = 0; mapped = 0
for off, ln, name in ext:
    if off < at: bad(f"{name}: extent at {off} overlaps the previous one (ends {at})")
    if ln <= 0 or off + ln > len(raw): bad(f"{name}: extent [{off}, {off+ln}) outside the file")
    at = max(at, off + ln); mapped += ln
if m['residual_bytes'] != len(raw) - mapped:
    bad(f"residual_bytes {m['residual_bytes']} != size {len(raw)} - mapped {mapped}")

# h5ls -r -v: every dataset, its dims, chunk dims, filters and allocated bytes.
ls = subprocess.run(['h5ls', '-r', '-v', path], capture_output=True, text=True, check=True).stdout
tool = {}
cur = None
for line in ls.splitlines():
    mm = re.match(r'^(/\S*)\s+Dataset \{(.*)\}\s*$', line)
    if mm:
        dims = [] if mm.group(2) == 'SCALAR' else [int(d.split('/')[0]) for d in mm.group(2).split(',')]
        cur = tool[mm.group(1)] = {'dims': dims, 'chunks': None, 'filters': 0, 'alloc': None, 'type': ''}
        continue
    if re.match(r'^/', line): cur = None; continue
    if cur is None: continue
    s = line.strip()
    if s.startswith('Chunks:'): cur['chunks'] = [int(x) for x in re.search(r'\{(.*?)\}', s).group(1).split(',')]
    elif s.startswith('Filter-'): cur['filters'] += 1
    elif s.startswith('Storage:'):
        a = re.search(r'(\d+) allocated bytes', s); cur['alloc'] = int(a.group(1)) if a else 0
    elif s.startswith('Type:'): cur['type'] = s[5:].strip()

# h5dump -H -p: datatype, layout and (contiguous) offset per dataset path.
dump = subprocess.run(['h5dump', '-H', '-p', path], capture_output=True, text=True, check=True).stdout
stack = []; cur = None
for line in dump.splitlines():
    s = line.strip()
    g = re.match(r'^(GROUP|DATASET) "(.*)" \{$', s)
    if g:
        name = g.group(2)
        full = name if name == '/' else '/'.join([x for x in stack if x and x != '@attr'] + [name]).replace('//', '/')
        if not full.startswith('/'): full = '/' + full
        stack.append(name if name != '/' else '')
        if g.group(1) == 'DATASET':
            cur = tool.setdefault(full, {}); cur['dumped'] = True
        continue
    opens, closes = s.count('{'), s.count('}')
    for i in range(opens - closes): stack.append('@attr' if i == 0 and s.startswith('ATTRIBUTE') else None)
    for _ in range(closes - opens):
        if stack and stack.pop() is not None: cur = None
    if cur is None or '@attr' in stack: continue
    if s.startswith('DATATYPE'): cur['h5type'] = s.split()[1]
    elif s.startswith('STRSIZE'): cur['strsize'] = s.split()[1].rstrip(';')
    elif s in ('CONTIGUOUS', 'COMPACT', 'EXTERNAL') or s.startswith('CHUNKED') or s.startswith('VIRTUAL'):
        cur['layout'] = s.split()[0]
    elif s.startswith('OFFSET') and 'layout' in cur: cur['offset'] = int(s.split()[1])
    elif s.startswith('HARDLINK'): cur['hardlink'] = True

f = h5py.File(path, 'r')
def has_vlen(dt):
    if h5py.check_vlen_dtype(dt) is not None or h5py.check_string_dtype(dt) and h5py.check_string_dtype(dt).length is None: return True
    if dt.fields: return any(has_vlen(t[0]) for t in dt.fields.values())
    if dt.subdtype: return has_vlen(dt.subdtype[0])
    return dt.kind == 'O'
def expect_dtype(dt):
    if dt.fields: return f'CMP{dt.itemsize}'
    if dt.kind == 'S': return f'STR{dt.itemsize}'
    if dt.kind in 'iuf' and not dt.subdtype and (dt.kind != 'f' or dt.itemsize in (4, 8)):
        n = {'i': 'I', 'u': 'U', 'f': 'F'}[dt.kind] + str(8 * dt.itemsize)
        if dt.itemsize == 1: return n
        return n + ('BE' if dt.byteorder == '>' else 'LE')
    return f'B{dt.itemsize}'
def h5dump_dtype(t):
    h = t.get('h5type', '')
    mm = re.match(r'H5T_STD_([IU])(\d+)(LE|BE)$', h)
    if mm: return mm.group(1) + mm.group(2) + ('' if mm.group(2) == '8' else mm.group(3))
    mm = re.match(r'H5T_IEEE_F(\d+)(LE|BE)$', h)
    if mm: return 'F' + mm.group(1) + mm.group(2)
    if h == 'H5T_STRING': return 'STR' + t.get('strsize', '?')
    if h == 'H5T_COMPOUND': return 'CMP'
    return None

n_vars = n_chunks = 0
datasets = [n for n, t in tool.items() if 'dims' in t]
for name in datasets:
    t = tool[name]
    ds = f[name]
    if has_vlen(ds.dtype):
        if name in vars_: bad(f"{name}: variable-length data mapped")
        continue
    v = vars_.get(name)
    if v is None: bad(f"{name}: h5ls lists it, the map does not"); continue
    n_vars += 1
    if v['shape'] != t['dims']: bad(f"{name}: shape {v['shape']} != h5ls {t['dims']}")
    want = expect_dtype(ds.dtype)
    if v['dtype'] != want: bad(f"{name}: dtype {v['dtype']} != h5py's {ds.dtype} ({want})")
    hd = h5dump_dtype(t)
    if hd and (not v['dtype'].startswith(hd) if hd == 'CMP' else v['dtype'] != hd):
        bad(f"{name}: dtype {v['dtype']} != h5dump's {t.get('h5type')}")
    if v['elem_size'] != ds.dtype.itemsize: bad(f"{name}: elem_size {v['elem_size']} != {ds.dtype.itemsize}")
    layout = t.get('layout')
    exts = v['extents']
    if ds.external:
        if exts: bad(f"{name}: data in an external file but {len(exts)} extents")
    elif layout == 'CONTIGUOUS':
        data = ds[()]
        if data.size == 0 or not t['alloc']:
            if exts: bad(f"{name}: unallocated/empty contiguous dataset has extents")
            continue
        if len(exts) != 1: bad(f"{name}: contiguous with {len(exts)} extents"); continue
        e = exts[0]
        if 'offset' in t and e['offset'] != t['offset']: bad(f"{name}: offset {e['offset']} != h5dump OFFSET {t['offset']}")
        if e['offset'] != ds.id.get_offset(): bad(f"{name}: offset {e['offset']} != H5Dget_offset {ds.id.get_offset()}")
        if e['length'] != t['alloc']: bad(f"{name}: length {e['length']} != h5ls allocated {t['alloc']}")
        if raw[e['offset']:e['offset'] + e['length']] != np.ascontiguousarray(data).tobytes():
            bad(f"{name}: extent bytes differ from what HDF5 reads")
        if e['filtered'] or e['start'] != [0] * len(v['shape']) or e['shape'] != v['shape']:
            bad(f"{name}: contiguous extent start/shape/filtered wrong: {e}")
    elif layout == 'CHUNKED':
        if ds.chunks is None or list(ds.chunks) != t['chunks']: bad(f"{name}: h5py chunks {ds.chunks} != h5ls {t['chunks']}")
        nch = ds.id.get_num_chunks()
        if len(exts) != nch: bad(f"{name}: {len(exts)} extents != {nch} allocated chunks")
        if sum(e['length'] for e in exts) != t['alloc']: bad(f"{name}: extent bytes != h5ls allocated {t['alloc']}")
        for e in exts:
            n_chunks += 1
            if e['shape'] != t['chunks']: bad(f"{name}: chunk extent shape {e['shape']} != {t['chunks']}")
            mask, b = ds.id.read_direct_chunk(tuple(e['start']))
            if raw[e['offset']:e['offset'] + e['length']] != b:
                bad(f"{name}: chunk at {e['start']} (offset {e['offset']}): bytes differ from read_direct_chunk")
            filt = t['filters'] > 0 and mask != (1 << t['filters']) - 1
            if e['filtered'] != filt: bad(f"{name}: chunk {e['start']} filtered={e['filtered']}, expected {filt}")
            if not filt:
                sl = tuple(slice(s, min(s + c, d)) for s, c, d in zip(e['start'], e['shape'], v['shape']))
                full = np.frombuffer(b, dtype=ds.dtype).reshape(e['shape'])
                part = full[tuple(slice(0, x.stop - x.start) for x in sl)]
                if part.tobytes() != np.ascontiguousarray(ds[sl]).tobytes():
                    bad(f"{name}: chunk {e['start']} elements differ from the dataset slice")
    else:
        if exts: bad(f"{name}: layout {layout} but {len(exts)} extents")
for name in vars_:
    if name not in datasets: bad(f"{name}: in the map but not listed by h5ls")
for p in problems: print(f"{path}: {p}")
if problems: sys.exit(1)
print(f"{path}: {n_vars} variables, {n_chunks} chunks, {len(raw) - mapped} residual bytes: agree with h5ls/h5dump/h5py")
PYEOF

cat >"$T/make_files.py" <<'PYEOF'
# make_files.py DIR: the h5py test files (the same content in several file formats).
import sys, os, numpy as np, h5py
out = sys.argv[1]
def fill(f):
    g = f.create_group('g1/g2/g3')
    g['deep'] = np.arange(12, dtype='<i8').reshape(3, 4)
    f.create_dataset('chunked_gzip', data=np.arange(4000, dtype='<f4').reshape(40, 100),
                     chunks=(16, 32), compression='gzip', compression_opts=4)
    f.create_dataset('chunked_plain', data=np.arange(100, dtype='<i2').reshape(10, 10), chunks=(4, 4))
    f['compound'] = np.array([(i, i * 0.5, b'n%d' % i) for i in range(7)],
                             dtype=[('id', '<i4'), ('val', '>f8'), ('tag', 'S3')])
    f['big_endian'] = np.arange(50, dtype='>f8')
    f['big_endian_i'] = np.arange(50, dtype='>u4')
    f['bytes_u8'] = np.arange(30, dtype='u1')
    f['scalar'] = np.float64(2.5)
    f['fixed_str'] = np.array([b'alpha', b'beta', b'gamma'], dtype='S8')
    f['vlen_str'] = 'a variable-length string lives in the heap'
    f.create_dataset('unallocated', shape=(100,), dtype='<i4')
    f.create_dataset('sparse', shape=(100, 100), maxshape=(None, 100), chunks=(10, 10), dtype='<f8')
    f['sparse'][0:10, 0:10] = 1.0
    f['sparse'][55, 55] = 2.0
    f.create_dataset('enum_like', data=np.arange(5, dtype='<i4').astype('<f2'))
    f.attrs['title'] = 'string attribute'
    f['g1'].attrs['units'] = np.array([b'm', b's'], dtype='S2')
    many = f.create_group('many')
    for i in range(25):
        many[f'd{i:02d}'] = np.full(8 + i, i, dtype='<i4')
    f['g1/g2/hardlink_to_deep'] = g['deep']  # same object: mapped once
    # compact layout, through the low-level API
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    sp = h5py.h5s.create_simple((6,))
    dsid = h5py.h5d.create(f.id, b'compact', h5py.h5t.STD_I32LE, sp, dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype='<i4'))
    f.create_dataset('external', shape=(10,), dtype='<i4',
                     external=[(os.path.basename(f.filename) + '.ext', 0, 40)])
cwd = os.getcwd(); os.chdir(out)
with h5py.File('nested.h5', 'w') as f: fill(f)
with h5py.File('earliest.h5', 'w', libver='earliest') as f: fill(f)
with h5py.File('latest.h5', 'w', libver='latest') as f: fill(f)
for ub in (512, 1024):
    with h5py.File(f'userblock{ub}.h5', 'w', userblock_size=ub) as f: fill(f)
    with open(f'userblock{ub}.h5', 'r+b') as raw: raw.write(b'user block text\n')
PYEOF

"$PY" "$T/make_files.py" "$F" || fail "make_files.py (h5py) failed"
ncgen -k nc4 -o "$F/netcdf4.nc" "$(dirname "$0")/data_x.cdl" || fail "ncgen -k nc4 failed"

# check_file FILE [DETAIL]: map and compare.
n_checked=0
check_file() {
  local f=$1 out
  out=$T/map.$(basename "$f").json
  map_json "$f" "$out" || fail "$MAP_VIA $f exited $?: $(head -3 "$out.err")"
  "$PY" "$T/check_map.py" "$f" "$out" "${2:-}" >"$out.check" 2>&1 ||
    fail "map of $f disagrees with the HDF5 tools: $(head -20 "$out.check")"
  ok "$(tail -1 "$out.check")"
  n_checked=$((n_checked + 1))
}
for f in nested earliest latest; do check_file "$F/$f.h5" "superblock at 0"; done
for ub in 512 1024; do check_file "$F/userblock$ub.h5" "superblock at $ub"; done
check_file "$F/netcdf4.nc" "netCDF-4"

# A dataset with more chunks than the helper lists (8192; the per-chunk queries of 1.10
# are quadratic) is a variable without extents, the file's other datasets keep theirs.
"$PY" - "$F/many_chunks.h5" <<'PYEOF' || fail "making many_chunks.h5 failed"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('many', data=np.arange(8193, dtype='u1'), chunks=(1,))
    f.create_dataset('few', data=np.arange(100, dtype='<i4'), chunks=(10,))
PYEOF
map_json "$F/many_chunks.h5" "$T/many_chunks.json" || fail "$MAP_VIA many_chunks.h5 exited $?"
"$PY" - "$T/many_chunks.json" <<'PYEOF' || fail "many_chunks.h5: $(head -c 600 "$T/many_chunks.json")"
import json, sys
m = json.loads(open(sys.argv[1]).read().splitlines()[0])
v = {x['name']: x for x in m['vars']}
sys.exit(0 if 'not listed' in m['detail'] and v['/many']['n_extents'] == 0
         and v['/many']['shape'] == [8193] and v['/few']['n_extents'] == 10 else 1)
PYEOF
ok "8193 chunks: /many mapped without extents ($(grep -o 'chunks of [^"]*' "$T/many_chunks.json")); /few keeps its 10"

# Format sanity: the earliest file really has old-style (symbol table) groups and the
# latest one new-style (link messages), as h5dump's superblock view says.
h5dump -B -H "$F/earliest.h5" >"$T/earliest.B" && h5dump -B -H "$F/latest.h5" >"$T/latest.B" ||
  fail "h5dump -B -H failed"
grep -q 'SUPERBLOCK_VERSION 0' "$T/earliest.B" || fail "earliest.h5 is not superblock v0"
grep -q 'SUPERBLOCK_VERSION [23]' "$T/latest.B" || fail "latest.h5 is not superblock v2/3"

# The HDF Group's parallel example (as in test_mpiio_ph5example.sh), without the library.
SRC=$(dpkg -L libhdf5-doc 2>/dev/null | grep -E '/ph5example\.c(\.gz)?$' | head -1 || true)
if command -v mpiexec.mpich >/dev/null && command -v h5pcc.mpich >/dev/null && [[ -n "$SRC" && -f "$SRC" ]]; then
  if [[ "$SRC" == *.gz ]]; then zcat "$SRC" >"$T/ph5example.c"; else cp "$SRC" "$T/ph5example.c"; fi
  # Built inside $T: h5pcc leaves its object file in the current directory.
  (cd "$T" && h5pcc.mpich -shlib -o "$T/ph5example" "$T/ph5example.c") >"$T/build.out" 2>&1 ||
    fail "h5pcc.mpich ph5example.c failed: $(tail -5 "$T/build.out")"
  mkdir -p "$F/ph5"
  timeout 60 mpiexec.mpich -n 4 "$T/ph5example" -c -f "$F/ph5" >"$T/ph5.out" 2>&1 ||
    fail "mpiexec.mpich -n 4 ph5example -c -f $F/ph5 failed: $(tail -5 "$T/ph5.out")"
  for f in ParaEg0.h5 ParaEg1.h5; do check_file "$F/ph5/$f" "superblock at 0"; done
else
  echo "note: ph5example part skipped (needs mpiexec.mpich, h5pcc.mpich, libhdf5-doc)"
fi

# --- hostile input --------------------------------------------------------------------
cat >"$T/hostile.py" <<'PYEOF'
# hostile.py MODE CMD... -- FILE...: runs CMD FILE (ckptfwd inspect --json) for each FILE,
# which must exit 0 (its --help: 0 = the file was read, with or without structure). MODE
# "agnostic": no map (no source, with a reason); MODE "any": a map may also be given, and
# must lie inside the file without overlaps.
import json, subprocess, sys
mode = sys.argv[1]; i = sys.argv.index('--'); cmd = sys.argv[2:i]; files = sys.argv[i + 1:]
problems = []; maps = failures = 0
for f in files:
    size = len(open(f, 'rb').read())
    try:
        r = subprocess.run(cmd + [f], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        problems.append(f"{f}: {' '.join(cmd)} did not finish in 60 s"); continue
    if r.returncode != 0:
        problems.append(f"{f}: inspect exited {r.returncode}: {r.stderr[:200]!r}"); continue
    m = json.loads(r.stdout.decode().splitlines()[0])
    if not m.get('source'):
        if not m.get('detail'): problems.append(f"{f}: agnostic without a reason")
        failures += 1; continue
    maps += 1
    if mode == 'agnostic':
        problems.append(f"{f}: got a {m['source']} map, expected none"); continue
    ext = sorted((e['offset'], e['length']) for v in m['vars'] for e in v['extents'])
    end = 0
    for off, ln in ext:
        if off < end or ln <= 0 or off + ln > size: problems.append(f"{f}: bad extent {off}+{ln}")
        end = off + ln
for p in problems: print(p)
print(f"{len(files)} files: {failures} without a map, {maps} with a valid map")
sys.exit(1 if problems else 0)
PYEOF
HOSTILE_CMD=("$CLI" inspect --json)

mkdir -p "$T/trunc"
for f in nested earliest latest userblock512; do
  size=$(stat -c %s "$F/$f.h5")
  for cut in 100 600 $((size / 2)) $((size * 9 / 10)) $((size - 1)); do
    head -c "$cut" "$F/$f.h5" >"$T/trunc/$f.$cut.h5"
  done
done
"$PY" "$T/hostile.py" agnostic "${HOSTILE_CMD[@]}" -- "$T"/trunc/*.h5 >"$T/trunc.out" 2>&1 ||
  fail "truncated files: $(head -10 "$T/trunc.out")"
ok "truncated files are left agnostic: $(tail -1 "$T/trunc.out")"

mkdir -p "$T/flip"
"$PY" - "$T/flip" "$F/earliest.h5" "$F/latest.h5" "$F/userblock512.h5" <<'PYEOF'
# 40 copies of each file with 1 to 4 bytes changed, seeded so a failure reproduces.
import random, sys, os
rng = random.Random(1234)
for src in sys.argv[2:]:
    b0 = open(src, 'rb').read()
    for k in range(40):
        b = bytearray(b0)
        for _ in range(rng.randint(1, 4)):
            p = rng.randrange(len(b))
            b[p] ^= 1 << rng.randrange(8)
        open(os.path.join(sys.argv[1], f'{os.path.basename(src)}.{k}.h5'), 'wb').write(b)
PYEOF
"$PY" "$T/hostile.py" any "${HOSTILE_CMD[@]}" -- "$T"/flip/*.h5 >"$T/flip.out" 2>&1 ||
  fail "bit-flipped files: $(head -10 "$T/flip.out")"
ok "bit-flipped files: $(tail -1 "$T/flip.out")"

# Inputs that crash and hang libhdf5: the caller survives and reports why, in time.
CRASH=$DATA/h5_btree_self_loop_crash.h5
HANG=$DATA/h5_btree_fanout_hang.h5
for what in crash hang; do
  f=$CRASH want="crashed with signal 11"
  [[ $what == hang ]] && f=$HANG want="timed out after 1500 ms"
  start=$(date +%s%N)
  CKPTFWD_INFER_TIMEOUT_MS=1500 "$CLI" inspect --json "$f" >"$T/$what.json" 2>"$T/$what.err" ||
    fail "ckptfwd inspect --json $f exited $? on the $what input: $(head -3 "$T/$what.err")"
  ms=$((($(date +%s%N) - start) / 1000000))
  "$PY" - "$T/$what.json" "$want" <<'PYEOF' || fail "inspect of the $what input: $(head -c 400 "$T/$what.json")"
import json, sys
m = json.loads(open(sys.argv[1]).read().splitlines()[0])
sys.exit(0 if not m['source'] and sys.argv[2] in m['detail'] else 1)
PYEOF
  [[ $ms -lt 10000 ]] || fail "inspect of the $what input took $ms ms (limit 1500 ms)"
  ok "$what input: agnostic, inspect says why ($(grep -o "$want" "$T/$what.json")) in $ms ms"
done
echo "PASS: $n_checked files mapped and checked against the HDF5 tools; hostile inputs handled"
