#!/usr/bin/env bash
# make bench's quick mode runs end to end: BENCH_QUICK=1 tools/bench/run_bench.sh with a
# small checkpoint (16 MiB from 1 and 2 ranks, 200 small files) writes bench.json with every
# section (uncaptured calls, checkpoint times, a job's next checkpoint, fsync of one file,
# forwarder stages, restart reads, small files, store contents, peak RSS, demo
# compression), every read-back was
# verified byte for byte and `ckptfwd restore` was byte-exact; the SVG exists. With
# BENCH_STORE_MBPS it also runs the pass on a bandwidth-limited store (a block-I/O cgroup):
# bench.json has its rows, read back exactly, or the run says it could not set the limit.
# The write patterns section (bench_patterns.sh) writes patterns.json with every pattern's
# times, the write beside a busy forwarder and the small files, restored byte-exact.
# The distributed file system section (bench_dfs.sh) writes dfs.json with both workloads'
# ratios and a byte-exact restore, or says why it was skipped.
# It asserts no time: only that the figures are there and are numbers.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich gzip zstd cmp
for b in bench_ckpt_writer bench_uncaptured bench_fsync bench_smallfiles stencil3d; do
  [[ -x "$BUILD/bin/$b" ]] || skip "$BUILD/bin/$b not built (needs MPICH)"
done
unset CKPTFWD_STATS_FILE  # the bench gives each job its own
# A short wave window: the next checkpoint's pause under ckptfwd waits one.
CKPTFWD_WAVE_WINDOW_MS=500 BENCH_NEXT_SIZES=16M BENCH_NEXT_RANKS="1 2" \
BENCH_DIR=$T/bench BENCH_QUICK=1 BENCH_SIZES=16M BENCH_RANKS="1 2" BENCH_SMALL_FILES=200 BENCH_UNCAPTURED_ITERS=2000 \
  BENCH_FSYNC_BYTES=4M BENCH_SIZE="16 16 16" BENCH_STORE_MBPS=2000 BENCH_LIMITED_SIZES=16M \
  BENCH_LIMITED_RANKS=2 BENCH_LIMITED_FSYNC_BYTES=4M BENCH_DFS_FILES=10 BENCH_DFS_STEPS=2 \
  BENCH_PATTERN_SIZE=2097152 BENCH_BUSY_FILES=2 BENCH_COMPUTE_M=20 BENCH_SMALL_PY=200 timeout 280 "$CKF_REPO/tools/bench/run_bench.sh" "$BUILD" \
  >"$T/bench.out" 2>&1 || fail "run_bench.sh exited $?: $(tail -20 "$T/bench.out")"
cat "$T/bench.out"
[[ -s "$T/bench/bench.svg" ]] || fail "no bench.svg"
grep -q '^<svg' "$T/bench/bench.svg" || fail "bench.svg is not SVG"
limit_skipped=0
grep -q '(skipped: no block-I/O limit can be set here)' "$T/bench.out" && limit_skipped=1
/usr/bin/python3 - "$T/bench/bench.json" "$limit_skipped" <<'PY' || fail "bench.json is incomplete (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
num = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
bad = []
def need(cond, what):
    if not cond: bad.append(what)
for sec in ("uncaptured", "checkpoint", "next_checkpoint", "fsync_single", "forwarder_stages", "restart_read",
            "small_files", "store", "peak_rss", "restore", "demo"):
    need(sec in r, "section " + sec)
need({u["kind"] for u in r["uncaptured"]} == {"open_read_close", "stat", "relative_open_close"}, "uncaptured kinds")
need(all(num(u["ns_with"]) and num(u["ns_without"]) for u in r["uncaptured"]), "uncaptured ns")
need(sorted(c["ranks"] for c in r["checkpoint"]) == [1, 2], "checkpoint rows for 1 and 2 ranks")
for c in r["checkpoint"]:
    for k in ("tmpfs_s", "disk_fsync_s", "lib_s", "lib_fsync_s", "lib_until_committed_s"):
        need(num(c[k]), f"checkpoint {c['ranks']} ranks: {k}")
need(sorted(c["ranks"] for c in r["next_checkpoint"]) == [1, 2], "next checkpoint rows for 1 and 2 ranks")
for c in r["next_checkpoint"]:
    for k in ("tmpfs_s", "disk_fsync_s", "lib_s", "lib_fsync_s", "lib_first_s"):
        need(num(c[k]), f"next checkpoint {c['ranks']} ranks: {k}")
need(len([x for x in r["raw"] if x.get("sec") == "read" and x.get("variant", "").startswith("next_")
          and x.get("verified") == 1]) == 4, "next checkpoints read back through ckptfwd")
for v in ("disk", "lib"):
    need(num(r["fsync_single"][v]["fsync_s"]), "fsync_single " + v)
for s in r["forwarder_stages"]:
    need(num(s["bytes_captured"]) and s["bytes_captured"] >= 16 << 20, "stage bytes_captured")
    need(num(s["compress_mb_s_core"]), "stage compress speed")
    need(num(s["peak_rss_bytes"]) and s["peak_rss_bytes"] > 0, "peak RSS")
for rd in r["restart_read"]:
    need(num(rd["disk_s"]) and num(rd["lib_s"]) and rd["verified"], "restart read")
sm = r["small_files"]
need(sm.get("files") == 200 and num(sm["lib_read_s"]) and num(sm["disk_read_s"]), "small files")
for s in r["store"]:
    need(num(s["store_files"]) and s["store_files"] >= 2 and num(s["store_bytes"]), "store counts")
need(r["restore"]["checked"] >= 2 and r["restore"]["byte_exact"] is True, "restore byte-exact")
need(r["restore"]["readback_verified"] is True, "read-back verified")
need(num(r["demo"]["compression"]["zstd3_bytes"]) and "ckptfwd" in r["demo"]["compression"], "demo compression")
lim = r.get("store_limited")
if sys.argv[2] == "1":
    need(lim is None, "no store_limited section when the limit could not be set")
else:
    need(lim is not None and lim["store_mbps"] == 2000, "store_limited section at 2000 MB/s")
    if lim:
        need([c["ranks"] for c in lim["checkpoint"]] == [2], "limited checkpoint row for 2 ranks")
        for c in lim["checkpoint"]:
            need(num(c["disk_fsync_s"]) and num(c["lib_fsync_s"]), "limited durable times")
        need(all(num(x["lib_s"]) for x in lim["restart_read"]), "limited restart reads")
        need(lim["readback_verified"] is True, "limited read-back verified")
        need(num(lim["fsync_single"]["lib"]["fsync_s"]), "limited fsync of one file")
if bad:
    print("missing or wrong:", ", ".join(bad)); sys.exit(1)
PY
if ! grep -q '^(skipped: SKIP' "$T/bench.out"; then
  /usr/bin/python3 - "$T/bench/dfs.json" <<'PY' || fail "dfs.json is incomplete"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["byte_exact"] is True, "restore not byte-exact"
assert sorted(w["workload"] for w in r["workloads"]) == ["chain", "small"], r["workloads"]
for w in r["workloads"]:
    assert all(isinstance(w[k], float) for k in ("direct_s", "ckptfwd_s", "ratio")), w
PY
  [[ -s $T/bench/dfs.svg ]] || fail "no dfs.svg"
fi

/usr/bin/python3 - "$T/bench/patterns.json" "$BUILD/bin/bench_patterns" <<'PY' || fail "patterns.json is incomplete"
import json, subprocess, sys
r = json.load(open(sys.argv[1]))
assert r["byte_exact"] is True, "restore not byte-exact"
names = [l.split("\t")[0] for l in subprocess.run([sys.argv[2], "--list"], capture_output=True, text=True).stdout.splitlines()]
# (O_DIRECT may be refused where a file system lacks it: that row may miss figures.)
assert [p["pattern"] for p in r["patterns"] if p["pattern"] != "odirect"] == [n for n in names if n != "odirect"]
for p in r["patterns"]:
    if p["pattern"] == "odirect":
        continue
    for k in ("tmpfs_s", "disk_s", "disk_fsync_s", "running_s", "running_fsync_s", "started_s", "started_fsync_s",
              "running_over_tmpfs", "started_fsync_over_disk_fsync"):
        assert isinstance(p[k], float), (p["pattern"], k, p.get(k))
b = r["beside_busy_forwarder"]
assert all(isinstance(b[k], float) for k in ("idle_s", "busy_s", "ratio")), b
c = r["compute_beside_busy_forwarder"]
assert all(isinstance(c[k], float) for k in ("idle_s", "busy_s", "ratio", "own_session_idle_s",
                                                "own_session_busy_s", "own_session_ratio")), c
assert [s["files"] for s in r["small_files"]] == [200], r["small_files"]
for k in ("direct_write_s", "lib_write_s", "lib_read_new_job_s", "direct_read_warm_s"):
    assert isinstance(r["small_files"][0][k], float), k
PY
[[ -s $T/bench/patterns.svg ]] || fail "no patterns.svg"

ok "bench quick mode: bench.json, dfs.json and patterns.json have every section, every read-back and restore byte-exact"
