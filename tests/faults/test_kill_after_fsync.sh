#!/usr/bin/env bash
# fsync returns only once the bytes are committed: the forwarder is killed (SIGKILL) right
# after an fsync returned, while the file is still open, and the store must already give
# back exactly the bytes written before the fsync. The writer then goes on and closes;
# the store ends with the whole file as closed.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30
# Nothing but the fsync may seal a batch before the kill.
export CKPTFWD_BATCH_WINDOW_MS=60000

"$FW" "$DIRECT/f.dat" 40M >/dev/null || fail "direct run failed"
head -c $((24 << 20)) "$DIRECT/f.dat" >"$T/first24M"
set +e
# fsync after 24M; one byte more, then it waits for the gate.
with_lib "$FW" "$CAP/f.dat" 40M --fsync-at 24M --pause-at $(((24 << 20) + 1)) "$T/gate" \
  >"$T/w.out" 2>&1 &
wpid=$!
set -e
wait_line "$T/w.out" "paused at $(((24 << 20) + 1))"
grep -q '^fsync ' "$T/w.out" && fail "the fsync failed: $(cat "$T/w.out")"
kill_forwarders
assert_store_has "$CAP/f.dat" "$T/first24M"
ok "the store holds the 24M written before the fsync, with the forwarder dead"
touch "$T/gate"
set +e
wait "$wpid"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "writer exit $rc after the forwarder was killed: $(cat "$T/w.out")"
assert_store_has "$CAP/f.dat" "$DIRECT/f.dat"
ok "the store holds the whole file (40M) as closed"
assert_verify_clean
