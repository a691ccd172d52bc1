#!/usr/bin/env bash
# `ckptfwd report` of a job of 2 nodes (two forwarders, CKPTFWD_NODE_ID n1 and n2, one
# store) and 3 checkpoint steps of 4 ranks (2 per node), each committed before the next:
#  - --json: both nodes, steps 1..3 complete with 2 files of each node, a checkpoint
#    record per node and step (2 files, their bytes), per node 6 files committed; every
#    figure equal to what was written;
#  - the text report names both nodes and all steps;
#  - --html: the page names every node and step, holds the 3 plots (SVG) and a row per
#    checkpoint record, and a headless Chromium opens it (dump of its DOM with the plots,
#    a screenshot). Skipped only where no browser is installed, except with CI=true
#    (make deps installs chromium-headless-shell and python3-matplotlib).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
SIZE=786432
for s in 1 2 3; do
  for r in 0 1 2 3; do
    mkdir -p "$DIRECT/step_$s" "$CAP/step_$s"
    head -c $SIZE /dev/urandom >"$DIRECT/step_$s/r$r.dat"
    node=n$((r / 2 + 1))
    CKPTFWD_NODE_ID=$node PMI_RANK=$r with_lib cp "$DIRECT/step_$s/r$r.dat" "$CAP/step_$s/" ||
      fail "writing step $s rank $r on $node failed"
  done
  for node in n1 n2; do CKPTFWD_NODE_ID=$node drain >/dev/null; done
done
# The forwarders write their counters at exit: stopped here (they would at idle exit).
for pid in $(session_forwarders); do kill -TERM "$pid" 2>/dev/null; done
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarders did not exit"
ls "$STORE/logs/"*.stats.jsonl >/dev/null 2>&1 || fail "no stats file beside the logs: $(ls -la "$STORE/logs")"

"$CLI" report "$STORE" --json >"$T/report.json" 2>"$T/report.err" || fail "report --json failed: $(cat "$T/report.err")"
/usr/bin/python3 - "$T/report.json" $SIZE "$STORE/logs" <<'PY' || fail "report --json does not describe the job (above)"
import json, sys, glob
m, size, logs = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
assert [n["node"] for n in m["nodes"]] == ["n1", "n2"], m["nodes"]
cps = m["checkpoints"]
assert [c["step"] for c in cps] == ["1", "2", "3"], [c["step"] for c in cps]
for c in cps:
    assert c["files"] == 4 and c["ranks"] == 4 and c["complete"], c
    assert c["bytes_in"] == 4 * size, c
    assert c["nodes"] == [{"node": "n1", "bytes": 2 * size}, {"node": "n2", "bytes": 2 * size}], c
assert m["latest_complete"] == "3"
waves = m["waves"]
for node in ("n1", "n2"):
    ws = [w for w in waves if w["node"] == node]
    assert len(ws) == 3, (node, ws)
    assert all(w["files"] == 2 and w["bytes"] == 2 * size and 1 <= w["processes"] <= 2 for w in ws), ws
    assert all(w["blocked_s"] >= 0 and w["durable_s"] >= 0 for w in ws), ws
# The records in the files are what the report shows: the last per checkpoint.
recs = [json.loads(l) for f in glob.glob(logs + "/*.stats.jsonl") for l in open(f) if l.strip()]
last = {}
for r in recs:
    if r["source"] == "checkpoint":
        last[(r["node"], r["pid"], r["id"])] = r
assert all(r["blocked_ns"] > 0 for r in last.values()), "a checkpoint with no blocked time"
got = sorted((w["node"], w["first_close_ns"], w["blocked_s"], w["durable_s"]) for w in waves)
want = sorted((r["node"], r["first_close_ns"], r["blocked_ns"] / 1e9, r["durable_ns"] / 1e9) for r in last.values())
assert len(got) == len(want) and all(
    g[:2] == w[:2] and abs(g[2] - w[2]) < 0.0011 and abs(g[3] - w[3]) < 0.0011 for g, w in zip(got, want)), \
    ("waves differ from the records", got, want)
for n in m["nodes"]:
    assert n["files_committed"] == 6 and n["bytes_committed"] == 6 * size, n
    assert n["checkpoints"] == 3, n
s = m["size"]
assert s["bytes_per_rank_min"] == s["bytes_per_rank_max"] == s["bytes_per_rank_mean"] == size, s
assert s["staging_peak_node_bytes"] == 2 * size, s
print("report:", len(cps), "checkpoints,", len(waves), "checkpoint records,", [n["node"] for n in m["nodes"]])
PY
"$CLI" report "$STORE" >"$T/report.txt" 2>&1 || fail "report failed: $(cat "$T/report.txt")"
grep -q "^  n1 " "$T/report.txt" && grep -q "^  n2 " "$T/report.txt" && grep -q "^\* 3 " "$T/report.txt" ||
  fail "the text report does not name both nodes and step 3: $(cat "$T/report.txt")"
ok "report --json and text: 2 nodes, 3 complete steps, 6 checkpoint records, every figure as written"

if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  [[ ${CI:-} == true ]] && fail "python3-matplotlib is missing (make deps installs it)"
  skip "no matplotlib for /usr/bin/python3 (Debian python3-matplotlib)"
fi
"$CLI" report "$STORE" --html "$T/report.html" >"$T/html.out" 2>&1 || fail "report --html failed: $(cat "$T/html.out")"
/usr/bin/python3 - "$T/report.html" <<'PY' || fail "the page lacks what the report says (above)"
import re, sys
page = open(sys.argv[1]).read()
for name in ("checkpoint-time", "ratio", "bytes-per-node"):
    assert f'id="plot-{name}"><svg' in page, "no plot " + name
for word in ("n1", "n2"):
    assert page.count(word) >= 3, word
rows = re.findall(r"<h2>Checkpoint records</h2>\s*<table>(.*?)</table>", page, re.S)[0].count("<tr>") - 1
assert rows == 6, f"{rows} checkpoint record rows"
steps = re.findall(r"<h2>Checkpoints</h2>\s*<table>(.*?)</table>", page, re.S)[0]
for s in ("1", "2", "3 (latest)"):
    assert f"<td>{s}</td>" in steps, "no step " + s
print("page:", len(page), "bytes, 3 plots, 6 record rows")
PY
BROWSER=$(command -v chromium-headless-shell || command -v chromium || true)
if [[ -z $BROWSER ]]; then
  [[ ${CI:-} == true ]] && fail "no headless browser (make deps installs chromium-headless-shell)"
  skip "no chromium-headless-shell or chromium to open the page"
fi
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
  --dump-dom "file://$T/report.html" >"$T/dom.html" 2>"$T/browser.err" || fail "$BROWSER could not open the page: $(tail -5 "$T/browser.err")"
[[ $(grep -o "<svg" "$T/dom.html" | wc -l) -ge 3 ]] && grep -q "ckptfwd report" "$T/dom.html" ||
  fail "the page as the browser parsed it has no plots: $(head -c 500 "$T/dom.html")"
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
  --window-size=1200,2400 --screenshot="$T/report.png" "file://$T/report.html" >/dev/null 2>"$T/shot.err" ||
  fail "$BROWSER could not take a screenshot: $(tail -5 "$T/shot.err")"
[[ $(stat -c %s "$T/report.png") -gt 20000 ]] || fail "the screenshot is $(stat -c %s "$T/report.png") bytes: an empty page?"
ok "report --html: 3 plots and every node and step; $(basename "$BROWSER") opens it ($(grep -o "<svg" "$T/dom.html" | wc -l) SVG in its DOM, a $(stat -c %s "$T/report.png")-byte screenshot)"
