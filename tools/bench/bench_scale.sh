#!/usr/bin/env bash
# make bench-scale: the store's metadata against the number of nodes and the length of its
# history. Two parts, each against its own baseline in the same run:
#   history  stores with H checkpoints of FILES small files each (BENCH_SCALE_HISTORY, "1 100
#            1000"), written through the library by a script that keeps the last two
#            checkpoints (each checkpoint a step directory; the files of the one two steps
#            back removed):
#            a MANIFEST of H commits and H x FILES unlinks, FILES x 2 live files. Then a new
#            job's first read of one file of the newest checkpoint (a fresh forwarder: the
#            restart's first open), from the store's catalog snapshot and, interleaved, with
#            the snapshot removed (a replay of the whole MANIFEST): median of REPS, every
#            read's bytes checked. Also the MANIFEST's bytes per file ever committed.
#   nodes    N simulated nodes (BENCH_SCALE_NODES, "1 2 4 8 16"; CKPTFWD_NODE_ID per node,
#            one rank each, the forwarders as a group, one store) each writing STEPS
#            checkpoints of RANK_FILES files, a pause between them: the commit latency per
#            wave (each forwarder's stats: ckpt_durable_s, from a checkpoint's last close to
#            its last file's commit; median over the nodes), and the job's time. Every
#            file of the last two steps restored and compared with a run without the
#            library. The machine's cores are shared by all simulated nodes: past a few
#            nodes the latency measures this machine, not the protocol.
# Prints a table, writes OUT.json and OUT.svg; exit 1 when a byte is wrong.
# usage: tools/bench/bench_scale.sh BUILD WORK OUT.json   (BENCH_QUICK=1: "1 50" checkpoints,
#        "1 2 4" nodes, 3 reps)
set -uo pipefail
BUILD=$(cd "${1:?usage: bench_scale.sh BUILD WORK OUT.json}" && pwd)
WORK=${2:?usage}
OUT=${3:?usage}
LIB=$BUILD/lib/libckptfwd.so CLI=$BUILD/bin/ckptfwd
QUICK=${BENCH_QUICK:-0}
HISTORY=${BENCH_SCALE_HISTORY:-$([[ $QUICK == 1 ]] && echo "1 50" || echo "1 100 1000")}
NODES=${BENCH_SCALE_NODES:-$([[ $QUICK == 1 ]] && echo "1 2 4" || echo "1 2 4 8 16")}
FILES=${BENCH_SCALE_FILES:-100} REPS=${BENCH_SCALE_REPS:-$([[ $QUICK == 1 ]] && echo 3 || echo 5)}
STEPS=${BENCH_SCALE_STEPS:-5} RANK_FILES=${BENCH_SCALE_RANK_FILES:-50}
for t in mpiexec.mpich /usr/bin/python3; do
  command -v "$t" >/dev/null || { echo "bench_scale.sh: '$t' not found; run 'make deps'" >&2; exit 2; }
done
rm -rf "$WORK" && mkdir -p "$WORK/stage" || exit 2
WORK=$(cd "$WORK" && pwd)
export CKPTFWD_STAGE_DIR=$WORK/stage
unset CKPTFWD_STORE CKPTFWD_CAPTURE LD_PRELOAD CKPTFWD_NODE_ID
RAW=$WORK/raw.txt
: >"$RAW"
bad=0

# The writer: CKPTS checkpoints of N files in DIR/step_C/PREFIXF, keeping the last two (it
# removes its own files of the step two back: each rank cleans up after itself).
cat >"$WORK/writer.sh" <<'EOS'
#!/bin/bash
dir=$1 ckpts=$2 n=$3 prefix=$4 pause=$5
for c in $(seq 1 "$ckpts"); do
  mkdir -p "$dir/step_$c"
  for f in $(seq 1 "$n"); do printf "ckpt %d %s %d %0.s" "$c" "$prefix" "$f" {1..100} >"$dir/step_$c/$prefix$f"; done
  sleep "$pause"
  [ "$c" -gt 2 ] && rm -f "$dir/step_$((c - 2))/$prefix"*
done
exit 0
EOS
chmod +x "$WORK/writer.sh"

# --- history ---
for h in $HISTORY; do
  d=$WORK/h$h
  mkdir -p "$d/ckpt"
  t0=$(date +%s.%N)
  CKPTFWD_JOB_ID=scale-gen-$h-$$ CKPTFWD_WAVE_WINDOW_MS=30 CKPTFWD_BATCH_WINDOW_MS=30 \
    CKPTFWD_IDLE_EXIT=2 LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$d/ckpt/step_*/*" \
    "$WORK/writer.sh" "$d/ckpt" "$h" "$FILES" f 0.1 || { echo "bench_scale.sh: writing $h checkpoints failed" >&2; exit 1; }
  echo "bench_scale.sh: $h checkpoints of $FILES files written in $(echo "$(date +%s.%N) - $t0" | bc) s" >&2
  printf "ckpt %d %s %d %0.s" "$h" f 1 {1..100} >"$d/expected"
  store=$d/ckpt/.ckptfwd
  echo "manifest $h $(stat -c %s "$store/MANIFEST") $((h * FILES))" >>"$RAW"
  for ((r = 0; r < REPS; r++)); do
    for v in snapshot whole; do
      [[ $v == whole ]] && rm -f "$store/MANIFEST.snap"
      t0=$(date +%s.%N)
      CKPTFWD_JOB_ID=scale-read-$h-$v-$r-$$ CKPTFWD_IDLE_EXIT=1 LD_PRELOAD="$LIB" \
        CKPTFWD_CAPTURE="$d/ckpt/step_*/*" cat "$d/ckpt/step_$h/f1" >"$d/got" 2>"$d/read.err"
      t1=$(date +%s.%N)
      cmp -s "$d/got" "$d/expected" || { echo "bench_scale.sh: $h checkpoints, $v: wrong bytes: $(head -c 200 "$d/read.err")" >&2; bad=1; }
      echo "first_open $h $v $r $(echo "$t1 - $t0" | bc)" >>"$RAW"
    done
  done
done

# --- nodes ---
for n in $NODES; do
  d=$WORK/n$n
  mkdir -p "$d/ckpt" "$d/direct"
  args=()
  for ((i = 0; i < n; i++)); do
    ((i > 0)) && args+=(:)
    args+=(-n 1 -env CKPTFWD_NODE_ID "n$i" "$WORK/writer.sh" "$d/ckpt" "$STEPS" "$RANK_FILES" "r$i-" 1)
    "$WORK/writer.sh" "$d/direct" "$STEPS" "$RANK_FILES" "r$i-" 0 || exit 1
  done
  t0=$(date +%s.%N)
  CKPTFWD_JOB_ID=scale-nodes-$n-$$ CKPTFWD_WAVE_WINDOW_MS=200 CKPTFWD_IDLE_EXIT=2 \
    CKPTFWD_STATS_FILE="$d/stats.jsonl" LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$d/ckpt/step_*/*" \
    timeout 900 mpiexec.mpich "${args[@]}" >"$d/job.out" 2>&1 || { echo "bench_scale.sh: $n nodes: the job failed: $(tail -3 "$d/job.out")" >&2; exit 1; }
  t1=$(date +%s.%N)
  sleep 3  # every forwarder's stats line (written at its idle exit)
  "$CLI" restore "$d/ckpt/.ckptfwd" --to "$d/restored" >/dev/null 2>&1 || { echo "bench_scale.sh: $n nodes: restore failed" >&2; bad=1; }
  while IFS= read -r f; do
    got=$d/restored$d/ckpt/$f
    [[ -e $got ]] || got=$d/restored/$f
    cmp -s "$d/direct/$f" "$got" || { echo "bench_scale.sh: $n nodes: $f restored wrong" >&2; bad=1; }
  done < <(cd "$d/direct" && find . -type f -printf '%P\n')
  lat=$(/usr/bin/python3 -c '
import json, statistics, sys
v = [json.loads(l).get("ckpt_durable_s") for l in open(sys.argv[1]) if l.startswith("{")]
v = [x for x in v if isinstance(x, (int, float)) and x > 0]
print(statistics.median(v) if v else -1, len(v))' "$d/stats.jsonl" 2>/dev/null || echo "-1 0")
  echo "nodes $n $(echo "$t1 - $t0" | bc) $lat $(stat -c %s "$d/ckpt/.ckptfwd/MANIFEST")" >>"$RAW"
done

/usr/bin/python3 - "$RAW" "$OUT" "$bad" "${OUT%.json}.svg" "$FILES" "$STEPS" "$RANK_FILES" <<'PY'
import json, statistics, sys
raw, out, bad, svg, files, steps, rank_files = sys.argv[1:8]
bad = bad == "1"
opens, man, nodes = {}, {}, []
for line in open(raw):
    f = line.split()
    if f[0] == "first_open":
        opens.setdefault(int(f[1]), {}).setdefault(f[2], []).append(float(f[4]))
    elif f[0] == "manifest":
        man[int(f[1])] = (int(f[2]), int(f[3]))
    elif f[0] == "nodes":
        nodes.append({"nodes": int(f[1]), "job_s": float(f[2]), "commit_latency_s": float(f[3]),
                      "forwarders_reporting": int(f[4]), "manifest_bytes": int(f[5])})
res = {"byte_exact": not bad, "history": [], "nodes": nodes,
       "history_files_per_checkpoint": int(files),
       "nodes_workload": f"{steps} checkpoints of {rank_files} files per node"}
h1 = min(opens) if opens else None
print(f"bench-scale: a restart's first open against the store's history ({files} files per checkpoint, last 2 kept)")
print(f"{'checkpoints':>11} {'MANIFEST':>10} {'B/file':>7} {'snapshot s':>11} {'/1 ckpt':>8} {'whole replay s':>15} {'/1 ckpt':>8}")
for h in sorted(opens):
    s, w = statistics.median(opens[h]["snapshot"]), statistics.median(opens[h]["whole"])
    b, nf = man[h]
    row = {"checkpoints": h, "manifest_bytes": b, "manifest_bytes_per_file": b / nf,
           "first_open_snapshot_s": s, "first_open_whole_s": w}
    res["history"].append(row)
for row in res["history"]:
    base = res["history"][0]
    row["snapshot_over_one"] = row["first_open_snapshot_s"] / base["first_open_snapshot_s"]
    row["whole_over_one"] = row["first_open_whole_s"] / base["first_open_whole_s"]
    print(f"{row['checkpoints']:>11} {row['manifest_bytes']:>10} {row['manifest_bytes_per_file']:>7.0f} "
          f"{row['first_open_snapshot_s']:>11.3f} {row['snapshot_over_one']:>8.2f} "
          f"{row['first_open_whole_s']:>15.3f} {row['whole_over_one']:>8.2f}")
print(f"commit latency per wave against simulated nodes ({res['nodes_workload']}, one store)")
print(f"{'nodes':>5} {'latency s':>10} {'/1 node':>8} {'job s':>7} {'forwarders':>10} {'MANIFEST':>9}")
for row in nodes:
    row["latency_over_one"] = row["commit_latency_s"] / nodes[0]["commit_latency_s"] if nodes[0]["commit_latency_s"] > 0 else None
    lo = "-" if row["latency_over_one"] is None else f"{row['latency_over_one']:.2f}"
    print(f"{row['nodes']:>5} {row['commit_latency_s']:>10.3f} {lo:>8} {row['job_s']:>7.2f} "
          f"{row['forwarders_reporting']:>10} {row['manifest_bytes']:>9}")
print(f"  every first read checked; restore of the node runs' last two steps: {'byte-exact' if not bad else 'NOT byte-exact'}")
json.dump(res, open(out, "w"), indent=1)
# The plot: two panels of ratios to the smallest case.
W, H = 620, 300
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
     '<rect width="100%" height="100%" fill="white"/>']
def panel(x0, title, xs, series):
    o.append(f'<text x="{x0}" y="20">{title}</text>')
    top = max([2.0] + [v for _, _, vals in series for v in vals if v]) * 1.1
    pw, ph, y0 = 260, 200, 250
    o.append(f'<line x1="{x0}" y1="{y0}" x2="{x0 + pw}" y2="{y0}" stroke="black"/>')
    o.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 - ph}" stroke="black"/>')
    for ref in (1, 2):
        y = y0 - ref / top * ph
        o.append(f'<line x1="{x0}" y1="{y:.0f}" x2="{x0 + pw}" y2="{y:.0f}" stroke="#bbb" stroke-dasharray="3"/>')
        o.append(f'<text x="{x0 - 22}" y="{y + 4:.0f}">{ref}x</text>')
    for i, x in enumerate(xs):
        o.append(f'<text x="{x0 + (i + 0.5) * pw / len(xs) - 8:.0f}" y="{y0 + 15}">{x}</text>')
    for name, color, vals in series:
        pts = [(x0 + (i + 0.5) * pw / len(xs), y0 - v / top * ph) for i, v in enumerate(vals) if v]
        o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (color, " ".join(f"{a:.0f},{b:.0f}" for a, b in pts)))
        if pts:
            o.append(f'<text x="{pts[-1][0] - 40:.0f}" y="{pts[-1][1] - 6:.0f}" fill="{color}">{name}</text>')
hist = res["history"]
panel(40, "first open / 1 checkpoint, by checkpoints", [r["checkpoints"] for r in hist],
      [("snapshot", "#2a7", [r["snapshot_over_one"] for r in hist]), ("whole", "#c55", [r["whole_over_one"] for r in hist])])
panel(350, "commit latency / 1 node, by nodes", [r["nodes"] for r in nodes],
      [("latency", "#27a", [r["latency_over_one"] for r in nodes])])
o.append("</svg>")
open(svg, "w").write("\n".join(o) + "\n")
print(f"  JSON: {out}  plot: {svg}")
sys.exit(1 if bad else 0)
PY
