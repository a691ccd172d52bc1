#!/usr/bin/env bash
# The CLI around a run: `ckptfwd run --capture GLOB -- CMD` runs CMD under the library and
# returns with the checkpoint committed (relative glob made absolute, CMD's exit status
# passed on); `ckptfwd stats --json` asks the running forwarder for its counters (every
# counter `ckptfwd stats --help` lists present, the numbers consistent with what was written);
# SIGUSR1 and the forwarder's exit each append one complete JSON line to CKPTFWD_STATS_FILE.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
STORE=$CAP/.ckptfwd
mkdir -p "$DIRECT" "$CAP" "$OUT"
export CKPTFWD_IDLE_EXIT=60   # stays up for the stats queries; stopped explicitly below
KEYS="files_captured bytes_captured files_committed bytes_committed bytes_stored containers_written ratio fallbacks errors restores bytes_restored time_compress_s time_write_s time_commit_s uptime_s pending_versions"

"$WRITER" write "$DIRECT" --rank 0 >/dev/null
(cd "$T" && timeout 120 "$CLI" run --capture 'ckpt/*' -- "$WRITER" write "$CAP" --rank 0) >"$T/run.out" 2>&1 ||
  fail "ckptfwd run failed: $(tail -5 "$T/run.out")"
[[ ! -f "$CAP/posix_r0.bin" ]] || fail "ckptfwd run --capture 'ckpt/*' (relative) did not capture $CAP/posix_r0.bin"
[[ $(count_containers "$STORE") -ge 1 ]] || fail "ckptfwd run returned before anything was committed"
set +e
(cd "$T" && timeout 60 "$CLI" run --capture 'ckpt/*' -- bash -c 'exit 7') >/dev/null 2>&1
rc=$?
set -e
[[ $rc -eq 7 ]] || fail "ckptfwd run -- bash -c 'exit 7' exited $rc, want CMD's status 7"
ok "ckptfwd run captures, commits before returning, and passes on CMD's exit status"

timeout 30 "$CLI" stats --json >"$T/stats.json" 2>"$T/stats.err" || fail "ckptfwd stats --json failed: $(cat "$T/stats.err")"
/usr/bin/python3 - "$T/stats.json" "$KEYS" "$(find "$DIRECT" -type f | wc -l)" "$(du -cb "$DIRECT"/* | tail -1 | cut -f1)" <<'PY' || fail "ckptfwd stats --json: see above ($(cat "$T/stats.json"))"
import json, sys
path, keys, nfiles, nbytes = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), int(sys.argv[4])
s = json.load(open(path))
missing = [k for k in keys if k not in s]
if missing:
    sys.exit(f"stats --json lacks keys {missing}")
if s["files_committed"] < nfiles:
    sys.exit(f"files_committed {s['files_committed']} < {nfiles} files written")
if s["bytes_committed"] < nbytes:
    sys.exit(f"bytes_committed {s['bytes_committed']} < {nbytes} bytes of final files")
if s["files_captured"] < s["files_committed"]:
    sys.exit(f"files_captured {s['files_captured']} < files_committed {s['files_committed']}")
if not (s["bytes_stored"] > 0 and s["containers_written"] >= 1 and s["ratio"] > 0):
    sys.exit(f"bytes_stored/containers_written/ratio not positive: {s}")
if s["pending_versions"] != 0 or s["errors"] != 0:
    sys.exit(f"after a drain: pending_versions {s['pending_versions']}, errors {s['errors']}")
print(f"stats: {s['files_committed']} files, {s['bytes_committed']} bytes committed, ratio {s['ratio']}")
PY
timeout 30 "$CLI" stats >"$T/stats.table" 2>&1 || fail "ckptfwd stats (table) failed: $(cat "$T/stats.table")"
ok "ckptfwd stats --json has every CONTRACT key with consistent numbers"

mapfile -t pids < <(session_forwarders)
[[ ${#pids[@]} -eq 1 ]] || fail "expected one forwarder for the session, found ${#pids[@]}"
before=$(grep -c '"source": *"forwarder"' "$CKPTFWD_STATS_FILE" 2>/dev/null || true)
kill -USR1 "${pids[0]}"
wait_for "[[ \$(grep -c '\"source\": *\"forwarder\"' '$CKPTFWD_STATS_FILE' 2>/dev/null) -gt ${before:-0} ]]" 10 ||
  fail "SIGUSR1 did not append a forwarder line to $CKPTFWD_STATS_FILE"
kill -TERM "${pids[0]}"
wait_for '[[ -z "$(session_forwarders)" ]]' 15 || fail "the forwarder did not exit on SIGTERM"
n=$(grep -c '"source": *"forwarder"' "$CKPTFWD_STATS_FILE")
[[ $n -ge $((${before:-0} + 2)) ]] || fail "expected a stats line at SIGUSR1 and one at exit, found $n: $(cat "$CKPTFWD_STATS_FILE")"
stats_sum "$CKPTFWD_STATS_FILE" forwarder files_committed >/dev/null || fail "stats file has a torn line"
timeout 30 "$CLI" stats --file "$CKPTFWD_STATS_FILE" >/dev/null 2>&1 || fail "ckptfwd stats --file could not read the stats file"
ok "SIGUSR1 and exit each append a complete JSON stats line"

restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "what ckptfwd run captured restores identically"
