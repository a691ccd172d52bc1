#!/usr/bin/env bash
# The forwarder is lost twice around a process's exit: killed after the process closed its
# files (handed over, not committed: a batch window of 3 s), and the forwarder the exit
# wait starts to replace it kills itself when the wait arrives (CKPTFWD_TEST_KILL_AT=waitall).
# What must hold: the exit wait finds or starts a forwarder again (CKPTFWD_EXIT_RETRY_S),
# so when the process exits 0 its files are on the store. Before, the library gave a call
# two tries: the process logged "NOT committed ... the forwarder is gone" and exited 0
# with its checkpoint only in staging.
# Part 2: no forwarder can be started again (CKPTFWD_FORWARDER fails after the first): the
# process exits 75, not 0; `ckptfwd drain` exits 1 naming the staged file, and once a
# forwarder can start, `ckptfwd drain` (with the job's capture globs) starts one that
# commits it and exits 0.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30 CKPTFWD_BATCH_WINDOW_MS=3000 CKPTFWD_TEST_KILL_AT=waitall

"$FW" "$DIRECT/r" 4M --files 4 >/dev/null || fail "direct run failed"
KILL_AFTER_CLOSE_EMPTY=1 kill_after_close "$T/w.out" "$CAP/r" 4M --files 4
kill_marker_fired waitall || fail "the second forwarder never killed itself at the exit wait: the test shows nothing"
[[ $KILLED_RC -eq 0 ]] || fail "writer exit $KILLED_RC: $(cat "$T/w.out"; tail -5 "$CKPTFWD_LOG")"
for k in 0 1 2 3; do assert_store_has "$CAP/r.$k" "$DIRECT/r.$k"; done
ok "all 4 files were on the store when the process exited 0, after two forwarders were lost"
assert_verify_clean

# Part 2: the forwarder is lost and cannot be started again.
unset CKPTFWD_TEST_KILL_AT
kill_forwarders  # part 1's third forwarder: the writer must start its own through fwd-once.sh
export CKPTFWD_EXIT_RETRY_S=3
cat >"$T/fwd-once.sh" <<SH
#!/usr/bin/env bash
# Starts the real forwarder the first time only (the gate file says it ran).
[[ -e "$T/started-once" ]] && { echo "test: no forwarder may start now" >&2; exit 1; }
touch "$T/started-once"
exec "$FWD" "\$@"
SH
chmod +x "$T/fwd-once.sh"
"$FW" "$DIRECT/m.dat" 8M >/dev/null || fail "direct run of m.dat failed"
export CKPTFWD_BATCH_WINDOW_MS=60000
CKPTFWD_FORWARDER=$T/fwd-once.sh kill_after_close "$T/w2.out" "$CAP/m.dat" 8M
[[ $KILLED_RC -eq 75 ]] || fail "a process whose files are not committed exited $KILLED_RC, not 75: $(tail -3 "$CKPTFWD_LOG")"
grep -q "NOT committed" "$CKPTFWD_LOG" || fail "the exit wait did not log NOT committed"
ok "exit status 75: $(grep -m1 'NOT committed' "$CKPTFWD_LOG" | cut -c1-160)"
unset CKPTFWD_BATCH_WINDOW_MS
rc=0
CKPTFWD_FORWARDER=$T/fwd-once.sh timeout 60 "$CLI" drain >"$T/drain1.out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "ckptfwd drain exited $rc with a closed version staged and no forwarder possible: $(cat "$T/drain1.out")"
grep -q "m.dat" "$T/drain1.out" || fail "ckptfwd drain does not name the staged file: $(cat "$T/drain1.out")"
ok "drain without a forwarder: $(head -1 "$T/drain1.out" | cut -c1-200)"
CKPTFWD_CAPTURE="$CAPTURE" timeout 60 "$CLI" drain >"$T/drain2.out" 2>&1 ||
  fail "ckptfwd drain with the job's globs exited $?: $(cat "$T/drain2.out")"
assert_store_has "$CAP/m.dat" "$DIRECT/m.dat"
ok "ckptfwd drain started a forwarder that committed m.dat: $(tail -1 "$T/drain2.out")"
assert_verify_clean
