#!/usr/bin/env bash
# Every `--json` output of the CLI is what docs/json.md documents: two HDF5 checkpoints
# (h5py) written under the library by two ranks, one file written directly by a process
# forced to fall back, then each command's JSON is checked against its table
# (json_doc_check.py: every key documented and of its type, every documented key present):
# ls, ls --vars, ls --steps, verify, dump --stats, stats (also with the interval advice, --mtbf), stats --vars
# (running forwarder), stats --file (its four kinds of records: forwarder, variable,
# client, checkpoint), report, inspect, schema check and config. A usage error is still exit 2 and prints no JSON.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || skip "python3-h5py/numpy not installed for /usr/bin/python3"
HERE=$(cd "$(dirname "$0")" && pwd)
DOC=$CKF_REPO/docs/json.md
CHECK="/usr/bin/python3 $HERE/json_doc_check.py $DOC"
export CKPTFWD_IDLE_EXIT=60 # stays up for the stats queries; stopped explicitly below
export CKPTFWD_CODEC_MIN_MBPS=0

/usr/bin/python3 "$HERE/make_h5.py" "$DIRECT/r0.h5"
/usr/bin/python3 "$HERE/make_h5.py" "$DIRECT/r1.h5"
for r in 0 1; do
  PMI_RANK=$r CKPTFWD_EXIT_WAIT=0 with_lib cp "$DIRECT/r$r.h5" "$CAP/" || fail "rank $r under the library failed"
done
head -c 65536 /dev/urandom >"$DIRECT/direct.bin"
with_lib bash -c 'CKPTFWD_TEST_FALLBACK_PID=$$ exec "$@"' as_fallback cp "$DIRECT/direct.bin" "$CAP/" ||
  fail "the forced fallback write failed"
[[ -f "$CAP/direct.bin" ]] || fail "the forced fallback did not write $CAP/direct.bin directly"
drain

run_json() { # NAME CMD...: runs CMD into $T/NAME.json; a non-zero exit is a failure
  local name=$1
  shift
  "$@" >"$T/$name.json" 2>"$T/$name.err" || fail "$* exited $?: $(tail -3 "$T/$name.err")"
}
run_json ls "$CLI" ls "$STORE" --json
$CHECK "ckptfwd ls STORE --json" "$T/ls.json" || fail "ls --json differs from docs/json.md (above)"
run_json vars "$CLI" ls "$STORE" --vars --json
$CHECK "ckptfwd ls STORE --vars --json" "$T/vars.json" || fail "ls --vars --json differs from docs/json.md (above)"
run_json varsl "$CLI" ls "$STORE" --vars -l --json
$CHECK "ckptfwd ls STORE --vars --json" "$T/varsl.json" || fail "ls --vars -l --json differs from docs/json.md (above)"
run_json steps "$CLI" ls "$STORE" --steps --json
$CHECK "ckptfwd ls STORE --steps --json" "$T/steps.json" || fail "ls --steps --json differs from docs/json.md (above)"
run_json verify "$CLI" verify --json "$STORE"
$CHECK "ckptfwd verify STORE --json" "$T/verify.json" || fail "verify --json differs from docs/json.md (above)"
/usr/bin/python3 - "$T/ls.json" "$T/vars.json" "$T/verify.json" <<'PY' || fail "the JSON outputs do not describe the store (above)"
import json, sys
ls, vs, ver = (json.load(open(p)) for p in sys.argv[1:4])
names = sorted(f["path"].rsplit("/", 1)[1] for f in ls["files"])
assert names == ["r0.h5", "r1.h5"], names
assert ls["total"]["files"] == 2 and ls["total"]["bytes_in"] == sum(f["size"] for f in ls["files"]), ls["total"]
assert vs["keys"] and all(k["files"] == 2 for k in vs["keys"]), vs["keys"]
assert ver["ok"] is True and ver["problems"] == [] and ver["files"] >= 2, ver
print(f"{len(vs['keys'])} variable keys; verify ok over {ver['containers']} containers")
PY

run_json dump "$CLI" dump "$STORE" /fields/temperature --step - --stats --json
$CHECK "ckptfwd dump STORE VAR --stats --json" "$T/dump.json" || fail "dump --stats --json differs from docs/json.md (above)"
run_json export "$CLI" export "$STORE" --var /fields/temperature --step - --to "$T/t.npy" --json
$CHECK "ckptfwd export STORE --var VAR --to OUT.npy --json" "$T/export.json" || fail "export --json differs from docs/json.md (above)"
run_json dumps "$CLI" dump "$STORE" /fields/temperature --step - --slice ::2 --stats --json
$CHECK "ckptfwd dump STORE VAR --stats --json" "$T/dumps.json" || fail "dump --slice --stats --json differs from docs/json.md (above)"
/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert [f["rank"] for f in j["files"]] == [0, 1] and j["all"]["count"] == 2 * 32 * 24 * 16, j' "$T/dump.json" ||
  fail "dump --stats --json: not both ranks' 32x24x16 temperature: $(head -c 600 "$T/dump.json")"
run_json stats "$CLI" stats --json
$CHECK "ckptfwd stats --json" "$T/stats.json" || fail "stats --json differs from docs/json.md (above)"
run_json advice "$CLI" stats --json --mtbf 24h
$CHECK "ckptfwd stats --json" "$T/advice.json" || fail "stats --json --mtbf differs from docs/json.md (above)"
/usr/bin/python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["advice"]; assert a["with_ckptfwd"] and a["without_ckptfwd"], a' "$T/advice.json" ||
  fail "stats --json --mtbf 24h: no advice with and without ckptfwd: $(cat "$T/advice.json")"
run_json statsvars "$CLI" stats --vars --json
$CHECK "ckptfwd stats --vars --json" "$T/statsvars.json" --lines ||
  fail "stats --vars --json differs from docs/json.md (above)"
ok "ls, ls --vars, verify, dump --stats, stats and stats --vars print the documented JSON"

mapfile -t pids < <(session_forwarders)
[[ ${#pids[@]} -eq 1 ]] || fail "expected one forwarder for the session, found ${#pids[@]}"
kill -TERM "${pids[0]}"
wait_for '[[ -z "$(session_forwarders)" ]]' 15 || fail "the forwarder did not exit on SIGTERM"
run_json file "$CLI" stats --file "$CKPTFWD_STATS_FILE" --json --mtbf 2d
$CHECK "ckptfwd stats --json" "$T/file.json" --lines --source forwarder || fail "forwarder records of stats --file --json (above)"
$CHECK "ckptfwd stats --vars --json" "$T/file.json" --lines --source variable || fail "variable records of stats --file --json (above)"
$CHECK "ckptfwd stats --file STATS_FILE --json" "$T/file.json" --lines --source client ||
  fail "client records of stats --file --json (above)"
$CHECK '"source": "checkpoint"' "$T/file.json" --lines --source checkpoint ||
  fail "checkpoint records of stats --file --json (above)"
run_json report "$CLI" report "$STORE" --json
$CHECK "ckptfwd report STORE --json" "$T/report.json" || fail "report --json differs from docs/json.md (above)"
# With --mtbf each node gets the advice of its forwarder record, as stats --json gives it.
run_json report_advice "$CLI" report "$STORE" --json --mtbf 2d
/usr/bin/python3 - "$T/report_advice.json" "$T/advice.json" <<'PY' || fail "report --mtbf: no advice as stats gives it (above)"
import json, sys
rep, stats = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert rep["nodes"] and all(set(n["advice"]) == set(stats["advice"]) for n in rep["nodes"]), rep["nodes"]
PY
ok "stats --file --json: forwarder, variable and client records as documented"

run_json inspect "$CLI" inspect --json "$DIRECT/r0.h5" "$DIRECT/direct.bin"
$CHECK "ckptfwd inspect --json FILE..." "$T/inspect.json" --lines || fail "inspect --json differs from docs/json.md (above)"
cat >"$T/tiny.schema" <<'EOF'
file "*.raw" little_endian
  int32    n
  float64  x[n]
EOF
/usr/bin/python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(struct.pack("<i4d",4,1,2,3,4))' "$T/s.raw"
run_json schema "$CLI" schema check --json "$T/tiny.schema" "$T/s.raw"
$CHECK "ckptfwd inspect --json FILE..." "$T/schema.json" --except file || fail "schema check --json differs from docs/json.md (above)"
ok "inspect and schema check print the documented JSON"
printf 'keep = 2\n' >"$T/cfg.conf"
run_json config env CKPTFWD_CONFIG="$T/cfg.conf" CKPTFWD_CAPTURE="$CAPTURE" "$CLI" config --json --all
$CHECK "ckptfwd config --json" "$T/config.json" || fail "config --json differs from docs/json.md (above)"
/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
keep = [s for s in c["settings"] if s["name"] == "CKPTFWD_KEEP"][0]
assert keep["value"] == "2" and keep["from"].endswith("cfg.conf:1"), keep
assert c["stores"] and not c["problems"], c' "$T/config.json" || fail "config --json does not say the file's keep = 2: $(cat "$T/config.json")"
ok "config prints the documented JSON"

# Bad input: still the usage error, nothing on stdout.
set +e
"$CLI" ls "$STORE" --all --json >"$T/usage.out" 2>"$T/usage.err"
rc=$?
set -e
[[ $rc -eq 2 && ! -s "$T/usage.out" ]] || fail "ls --all --json: exit $rc (want 2), stdout: $(head -c 200 "$T/usage.out")"
ok "ls --all --json is a usage error (exit 2) that prints no JSON"
