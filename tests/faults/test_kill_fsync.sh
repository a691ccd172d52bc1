#!/usr/bin/env bash
# The forwarder is killed while it serves an fsync: after it created the snapshot's staged
# file, before it copied the open version into it (CKPTFWD_TEST_KILL_AT=sync-copy). What
# must hold: the fsync either fails or returns after the bytes are durable (the library
# re-sends it to the forwarder it starts again); the half-copied snapshot never becomes a
# version; the open version stays open, takes the writes after the fsync, and is
# committed whole at close. Before the recovery protocol the snapshot's description was
# written before its copy, so recovery committed the empty snapshot, and the live file
# was truncated.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30

"$FW" "$DIRECT/f.dat" 40M --fsync-at 24M >/dev/null || fail "direct run failed"
set +e
CKPTFWD_TEST_KILL_AT=sync-copy with_lib "$FW" "$CAP/f.dat" 40M --fsync-at 24M >"$T/w.out" 2>&1
rc=$?
set -e
kill_marker_fired sync-copy || fail "the forwarder never reached the kill point sync-copy: the test shows nothing"
ok "the forwarder was killed in the fsync's snapshot"
if [[ $rc -eq 3 ]]; then
  grep -q '^fsync ' "$T/w.out" || fail "exit 3 but no failed fsync reported: $(cat "$T/w.out")"
  ok "the fsync reported an error (allowed)"
else
  [[ $rc -eq 0 ]] || fail "writer exit $rc: $(cat "$T/w.out")"
  ok "the fsync and the close succeeded"
fi
assert_store_has "$CAP/f.dat" "$DIRECT/f.dat"
ok "the store holds the whole file (40M) as closed, not the snapshot"
assert_verify_clean
