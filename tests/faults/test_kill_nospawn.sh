#!/usr/bin/env bash
# CKPTFWD_NO_SPAWN=1 with a forwarder the job script started: it is killed while a file is
# being written, and the library may not start another. What must hold: close does not
# return 0 with the bytes only in staging: the library writes the file to its real path
# (the fallback: counted, logged), or close fails. Then, with a file closed (handed over)
# before the kill: the exit wait says loudly that it is not committed and where it is (after
# CKPTFWD_EXIT_RETRY_S of reconnect tries), the process exits 75 instead of 0, and a
# forwarder started again commits it.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30 CKPTFWD_NO_SPAWN=1

"$FW" "$DIRECT/n.dat" 32M >/dev/null || fail "direct run failed"
timeout 60 "$FWD" --daemon || fail "ckptfwd-forwarder --daemon failed"
with_lib "$FW" "$CAP/n.dat" 32M --pause-at 16M "$T/gate" >"$T/w.out" 2>&1 &
writer=$!
wait_line "$T/w.out" "paused at 16777216"
kill_forwarders
touch "$T/gate"
rc=0
wait "$writer" || rc=$?
if [[ $rc -eq 0 ]]; then
  assert_same_bytes "$DIRECT/n.dat" "$CAP/n.dat" "the real file after close fell back"
  grep -q "n.dat" "$CKPTFWD_LOG" || fail "the fallback of n.dat is not logged"
  ok "close wrote n.dat to its real path (logged): $(grep -m1 'n.dat' "$CKPTFWD_LOG")"
else
  grep -q '^close ' "$T/w.out" || fail "writer exit $rc without a failed close: $(cat "$T/w.out")"
  ok "close returned an error"
fi

# Part 2: closed before the kill, not committed (batch window 60 s).
"$FW" "$DIRECT/m.dat" 8M >/dev/null
export CKPTFWD_BATCH_WINDOW_MS=60000
timeout 60 "$FWD" --daemon || fail "second ckptfwd-forwarder --daemon failed"
CKPTFWD_EXIT_RETRY_S=2 kill_after_close "$T/w2.out" "$CAP/m.dat" 8M
[[ $KILLED_RC -eq 75 ]] || fail "the writer whose file is not committed exited $KILLED_RC, not 75"
grep -q "NOT committed" "$CKPTFWD_LOG" || fail "the exit wait did not say the files are not committed: $(tail -3 "$CKPTFWD_LOG")"
ok "exit wait: $(grep -m1 'NOT committed' "$CKPTFWD_LOG")"
unset CKPTFWD_BATCH_WINDOW_MS
timeout 60 "$FWD" --daemon || fail "third ckptfwd-forwarder --daemon failed"
drain
assert_store_has "$CAP/m.dat" "$DIRECT/m.dat"
ok "a forwarder started again committed m.dat whole"
