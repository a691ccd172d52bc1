#!/usr/bin/env bash
# The node's forwarder is stopped (SIGSTOP: a debugger, an operator) while a process opens
# a captured file. What must hold: the open does not hang for good; after a bounded wait
# (10 s with the forwarder found stopped at every check) the library takes it as gone and
# writes the file directly, byte-exact, and says so in its log. Before, the open never
# returned.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=60

"$FW" "$DIRECT/s.dat" 4M >/dev/null || fail "direct run failed"
timeout 60 "$FWD" --daemon || fail "ckptfwd-forwarder --daemon failed"
mapfile -t pids < <(session_forwarders)
[[ ${#pids[@]} -eq 1 ]] || fail "expected one forwarder, found: ${pids[*]}"
kill -STOP "${pids[0]}"
trap 'kill -CONT "${pids[0]}" 2>/dev/null; ckf_cleanup' EXIT
start=$SECONDS
rc=0
timeout 90 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$FW" "$CAP/s.dat" 4M >"$T/w.out" 2>&1 || rc=$?
secs=$((SECONDS - start))
[[ $rc -ne 124 ]] || fail "the writer hung on the stopped forwarder for 90 s"
[[ $rc -eq 0 ]] || fail "writer exit $rc: $(cat "$T/w.out")"
assert_same_bytes "$DIRECT/s.dat" "$CAP/s.dat" "s.dat written directly"
grep -q "stopped" "$CKPTFWD_LOG" || fail "the log does not say the forwarder is stopped: $(tail -3 "$CKPTFWD_LOG")"
ok "the open gave up on the stopped forwarder after ${secs} s and wrote s.dat directly: $(grep -m1 stopped "$CKPTFWD_LOG" | cut -c1-160)"
