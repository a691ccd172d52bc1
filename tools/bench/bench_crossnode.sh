#!/usr/bin/env bash
# Files shared across nodes (make bench, section h): posix_shared's patterns on 2 simulated
# nodes of 2 ranks (CKPTFWD_NODE_ID per node, one store on this disk): a file handed from
# rank to rank 8 times, alternating nodes (close on one node, open on the other), the
# header written by rank 0 then a block by every rank, and N-1 pwrite. Each run without the
# library, with it (the forwarders as a group, the default) and with CKPTFWD_GROUP=0 (the
# nodes coordinated through the store alone: not for N-1, whose read-back is wrong that
# way), in interleaved rounds. The time is
# posix_shared's: its writes, closes and barriers on the slowest rank, without its
# read-back (which checks every byte on every rank; a wrong byte fails the run), and the
# whole job's (mpiexec until it returned, the exit wait included). Every file is restored
# from the store afterwards and compared with the run without the library.
# usage: tools/bench/bench_crossnode.sh BUILD WORK OUT.json   (BENCH_QUICK=1: one round)
set -uo pipefail
BUILD=$1 WORK=$2 OUT=$3
PS=$BUILD/bin/posix_shared LIB=$BUILD/lib/libckptfwd.so CLI=$BUILD/bin/ckptfwd
[[ -x $PS ]] || { echo "bench_crossnode.sh: $PS not built (needs mpicc.mpich)" >&2; exit 2; }
ROUNDS=$([[ ${BENCH_QUICK:-0} == 1 ]] && echo 1 || echo 3)
rm -rf "$WORK" && mkdir -p "$WORK/direct" || exit 2
RAW=$WORK/raw.txt
: >"$RAW"
run() {  # run VARIANT MODE FILE
  local variant=$1 mode=$2 f=$3 t0 t1 line rc
  local -a pre=(env)
  case $variant in
    group) pre=(env LD_PRELOAD="$LIB" CKPTFWD_GROUP=1) ;;
    store) pre=(env LD_PRELOAD="$LIB" CKPTFWD_GROUP=0) ;;
  esac
  t0=$(date +%s.%N)
  line=$("${pre[@]}" CKPTFWD_CAPTURE="$WORK/$variant/*" CKPTFWD_JOB_ID="bx-$variant-$$-$mode-$r" \
    CKPTFWD_IDLE_EXIT=2 timeout 300 mpiexec.mpich \
    -n 2 -env CKPTFWD_NODE_ID n0 "$PS" "$mode" "$f" : -n 2 -env CKPTFWD_NODE_ID n1 "$PS" "$mode" "$f" 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  if [[ $rc -ne 0 ]]; then
    echo "bench_crossnode.sh: $variant $mode failed: $line" >&2
    exit 1
  fi
  echo "$variant $mode $r $(awk '/^elapsed/{print $2}' <<<"$line") $(echo "$t1 - $t0" | bc)" >>"$RAW"
}
for ((r = 0; r < ROUNDS; r++)); do
  for mode in chain header n1; do
    for variant in direct group store; do
      [[ $variant == store && $mode == n1 ]] && continue
      mkdir -p "$WORK/$variant"
      run "$variant" "$mode" "$WORK/$variant/$mode-$r.dat"
    done
  done
done
# Every file the library captured, restored and compared with the run without it.
bad=0
for variant in group store; do
  out=$WORK/restored-$variant
  "$CLI" restore "$WORK/$variant/.ckptfwd" --to "$out" >/dev/null 2>&1 || bad=1
  for f in "$WORK/direct"/*.dat; do
    [[ $variant == store && $(basename "$f") == n1-* ]] && continue
    got=$out$WORK/$variant/$(basename "$f")
    [[ -e $got ]] || got=$out/$(basename "$f")
    cmp -s "$f" "$got" || { echo "bench_crossnode.sh: $variant $(basename "$f") restored wrong" >&2; bad=1; }
  done
done
/usr/bin/python3 - "$RAW" "$OUT" "$bad" "$WORK/crossnode.svg" <<'PY'
import json, statistics, sys
raw, out, bad, svg = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
rows = {}
for line in open(raw):
    v, mode, r, el, wall = line.split()
    rows.setdefault(mode, {}).setdefault(v, []).append((float(el), float(wall)))
res = {"byte_exact": not bad, "rounds": max(len(x) for m in rows.values() for x in m.values()),
       "layout": "2 nodes x 2 ranks", "patterns": []}
print("(h) files shared across nodes, s (2 simulated nodes x 2 ranks; median of rounds)")
print(f"{'pattern':<22} {'direct':>8} {'group':>8} {'/direct':>8} {'store only':>10} {'/direct':>8}   whole job: direct group store-only")
names = {"chain": "8 handoffs (chain)", "header": "header, then all", "n1": "N-1 pwrite"}
for mode in ("chain", "header", "n1"):
    m = {v: (statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs)) for v, xs in rows[mode].items()}
    p = {"pattern": mode, **{f"{v}_s": m[v][0] for v in m}, **{f"{v}_job_s": m[v][1] for v in m}}
    m.setdefault("store", (None, None))
    p["group_over_direct"] = m["group"][0] / m["direct"][0]
    p["store_over_direct"] = m["store"][0] / m["direct"][0] if m["store"][0] else None
    res["patterns"].append(p)
    f = lambda x, spec: "-" if x is None else format(x, spec)
    print(f"{names[mode]:<22} {m['direct'][0]:8.3f} {m['group'][0]:8.3f} {p['group_over_direct']:8.2f} "
          f"{f(m['store'][0], '10.3f'):>10} {f(p['store_over_direct'], '8.2f'):>8}   {m['direct'][1]:.2f} "
          f"{m['group'][1]:.2f} {f(m['store'][1], '.2f')}")
print("  store only, N-1: not run (each node's ranks read back the other node's blocks wrong)")
print(f"  every rank's read-back verified in every run; restore of every file: {'byte-exact' if not bad else 'NOT byte-exact'}")
json.dump(res, open(out, "w"), indent=1)
# The plot: per pattern, the two ratios to the run without the library (log scale).
import math
W, H, L = 560, 60 + 60 * len(res["patterns"]), 150
top = max(max(p["group_over_direct"], p["store_over_direct"] or 1) for p in res["patterns"])
scale = (W - L - 40) / math.log10(max(top, 2) * 1.2)
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
     '<rect width="100%" height="100%" fill="white"/>',
     '<text x="10" y="20">time / run without the library (log scale; 1 = same)</text>']
for i, p in enumerate(res["patterns"]):
    y = 40 + 60 * i
    o.append(f'<text x="10" y="{y + 18}">{names[p["pattern"]]}</text>')
    for j, (k, c, lab) in enumerate((("group_over_direct", "#2a7", "group"), ("store_over_direct", "#c55", "store only"))):
        if p[k] is None:
            continue
        w = max(1, math.log10(max(p[k], 1)) * scale)
        o.append(f'<rect x="{L}" y="{y + 22 * j}" width="{w:.0f}" height="18" fill="{c}"/>')
        o.append(f'<text x="{L + w + 4:.0f}" y="{y + 22 * j + 14}">{lab} {p[k]:.2f}x</text>')
o.append("</svg>")
open(svg, "w").write("\n".join(o) + "\n")
print(f"  JSON: {out}  plot: {svg}")
sys.exit(1 if bad else 0)
PY
