#!/usr/bin/env bash
# The store on a real distributed file system (make bench, section i): the job's run time
# with and without the library on the same GlusterFS volume (default options, one FUSE
# client per simulated node, each node's processes in a mount namespace of their own:
# tests/integration/dfs.sh). Two workloads, in interleaved rounds:
#   small   2 nodes x 4 ranks, each writing BENCH_DFS_FILES small files (~1 KiB) in each of
#           BENCH_DFS_STEPS step directories (a script's checkpoint of many small files);
#   chain   posix_shared's file handed from rank to rank 8 times across the two nodes
#           (close on one node's client, open on the other's).
# The time is the whole job's (mpiexec until it returned: the library's exit wait, so its
# last commit, included). Every file the library captured is restored afterwards through
# the other node's client and compared with the run without it; the containers per run
# are counted (a wave's files in a few containers).
# Needs root, /dev/fuse and GlusterFS (Debian glusterfs-server/-client); exit 77 (skipped)
# without them.
# usage: tools/bench/bench_dfs.sh BUILD OUT.json   (BENCH_QUICK=1: one round)
set -uo pipefail
BUILD=$(cd "${1:?usage: bench_dfs.sh BUILD OUT.json}" && pwd)
OUT=${2:?usage: bench_dfs.sh BUILD OUT.json}
HERE=$(cd "$(dirname "$0")" && pwd)
TESTS=$HERE/../../tests
source "$TESTS/integration/lib.sh"
ckf_init "$BUILD"
source "$TESTS/faults/lib_faults.sh"
source "$TESTS/integration/dfs.sh"
PS=$BUILD/bin/posix_shared
[[ -x $PS ]] || skip "posix_shared not built (needs mpicc.mpich)"
dfs_setup 2
ckf_stage_on_tmpfs
export CKPTFWD_IDLE_EXIT=5
FILES=${BENCH_DFS_FILES:-50} STEPS=${BENCH_DFS_STEPS:-4}
ROUNDS=$([[ ${BENCH_QUICK:-0} == 1 ]] && echo 1 || echo 3)
RAW=$T/raw.txt
: >"$RAW"
cat >"$T/small.sh" <<EOS
#!/bin/bash
dir=\$1 r=\$2
for s in \$(seq 1 $STEPS); do
  mkdir -p "\$dir/step\$s"
  for f in \$(seq 1 $FILES); do
    printf "step %d rank %d file %d %0.s" \$s \$r \$f {1..150} >"\$dir/step\$s/r\$r-f\$f"
  done
done
EOS
chmod +x "$T/small.sh"

# job WORKLOAD VARIANT ROUND: one run; appends "workload variant round seconds" to RAW.
job() {
  local w=$1 v=$2 r=$3 i t0 t1 dir=$DFS/$1-$2-$3 lib="" args=()
  [[ $v == ckptfwd ]] && lib=$LIB
  mkdir -p "${DFS_MNT[0]}/$w-$v-$r"
  for ((i = 0; i < 2; i++)); do
    ((i > 0)) && args+=(:)
    case $w in
      small)
        args+=(-n 4 -env CKPTFWD_NODE_ID "n$i" "$DFS_ON_NODE" "$i" env LD_PRELOAD="$lib"
          CKPTFWD_CAPTURE="$dir/step*/*" bash -c "exec $T/small.sh $dir \$PMI_RANK") ;;
      chain)
        args+=(-n 2 -env CKPTFWD_NODE_ID "n$i" "$DFS_ON_NODE" "$i" env LD_PRELOAD="$lib"
          CKPTFWD_CAPTURE="$dir/*" "$PS" chain "$dir/chain.dat" 100000) ;;
    esac
  done
  t0=$(date +%s.%N)
  CKPTFWD_JOB_ID=bdfs-$w-$v-$r-$$ timeout 600 mpiexec.mpich "${args[@]}" >"$T/job.out" 2>&1 ||
    fail "$w $v round $r: the job failed: $(tail -3 "$T/job.out")"
  t1=$(date +%s.%N)
  echo "$w $v $r $(echo "$t1 - $t0" | bc)" >>"$RAW"
}

for ((r = 0; r < ROUNDS; r++)); do
  for w in small chain; do
    for v in direct ckptfwd; do job "$w" "$v" "$r"; done
  done
done

# Every captured file restored through node 1's client, compared with the direct run's.
bad=0
: >"$T/containers"
for ((r = 0; r < ROUNDS; r++)); do
  for w in small chain; do
    src=${DFS_MNT[1]}/$w-ckptfwd-$r ref=${DFS_MNT[1]}/$w-direct-$r out=$T/restored-$w-$r
    "$CLI" restore "$src/.ckptfwd" --to "$out" >/dev/null 2>&1 || { echo "restore of $w round $r failed" >&2; bad=1; }
    while IFS= read -r f; do
      got=$out$DFS/$w-ckptfwd-$r/$f
      [[ -e $got ]] || got=$out/$f  # (restore drops the files' common directory)
      cmp -s "$ref/$f" "$got" || { echo "$w round $r: $f restored wrong" >&2; bad=1; }
    done < <(cd "$ref" && find . -type f -printf '%P\n')
    echo "$w $(find "$src/.ckptfwd" -name '*.ckc' | wc -l)" >>"$T/containers"
  done
done

/usr/bin/python3 - "$RAW" "$OUT" "$bad" "${OUT%.json}.svg" "$T/containers" "$FILES" "$STEPS" <<'PY'
import json, statistics, sys
raw, out, bad, svg, cont, files, steps = sys.argv[1:8]
bad = bad == "1"
times = {}
for line in open(raw):
    w, v, r, s = line.split()
    times.setdefault(w, {}).setdefault(v, []).append(float(s))
containers = {}
for line in open(cont):
    w, n = line.split()
    containers.setdefault(w, []).append(int(n))
names = {"small": f"2x4 ranks, {int(files) * int(steps)} small files each",
         "chain": "8 handoffs across nodes"}
res = {"byte_exact": not bad, "file_system": "GlusterFS, 2 FUSE clients, default options",
       "rounds": len(times["small"]["direct"]), "workloads": []}
print("(i) the store on a distributed file system, whole job s (median of rounds)")
print(f"{'workload':<34} {'direct':>8} {'ckptfwd':>8} {'ratio':>6}  min..max ratio  containers")
for w in ("small", "chain"):
    d, c = times[w]["direct"], times[w]["ckptfwd"]
    ratios = [b / a for a, b in zip(d, c)]
    p = {"workload": w, "direct_s": statistics.median(d), "ckptfwd_s": statistics.median(c),
         "ratio": statistics.median(c) / statistics.median(d), "ratio_min": min(ratios),
         "ratio_max": max(ratios), "containers": containers.get(w, [])}
    res["workloads"].append(p)
    print(f"{names[w]:<34} {p['direct_s']:8.2f} {p['ckptfwd_s']:8.2f} {p['ratio']:6.2f}  "
          f"{p['ratio_min']:.2f}..{p['ratio_max']:.2f}       {','.join(map(str, p['containers']))}")
print(f"  restore of every captured file through the other node's client: "
      f"{'byte-exact' if not bad else 'NOT byte-exact'}")
json.dump(res, open(out, "w"), indent=1)
W, L = 560, 220
H = 50 + 50 * len(res["workloads"])
top = max(max(p["ratio"], 1.0) for p in res["workloads"]) * 1.3
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
     '<rect width="100%" height="100%" fill="white"/>',
     '<text x="10" y="20">job time with ckptfwd / without, on GlusterFS (1 = same)</text>']
for i, p in enumerate(res["workloads"]):
    y = 35 + 50 * i
    w = p["ratio"] / top * (W - L - 60)
    o.append(f'<text x="10" y="{y + 14}">{names[p["workload"]]}</text>')
    o.append(f'<rect x="{L}" y="{y}" width="{w:.0f}" height="18" fill="#2a7"/>')
    o.append(f'<text x="{L + w + 4:.0f}" y="{y + 14}">{p["ratio"]:.2f}x</text>')
x1 = L + 1.0 / top * (W - L - 60)
o.append(f'<line x1="{x1:.0f}" y1="30" x2="{x1:.0f}" y2="{H - 5}" stroke="#888" stroke-dasharray="3"/>')
o.append("</svg>")
open(svg, "w").write("\n".join(o) + "\n")
print(f"  JSON: {out}  plot: {svg}")
sys.exit(1 if bad else 0)
PY
