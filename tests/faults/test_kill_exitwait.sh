#!/usr/bin/env bash
# The forwarder is killed after a process closed its files (handed over, not yet committed:
# a batch window of 3 s) and before the process exits. What must hold: the exit wait
# survives the reconnect: it waits on the new forwarder (which recovers the closed
# versions) until they are committed, so when the process is gone the files are on the
# store. Before, WAITALL on a new connection had nothing to wait for and returned at once:
# a restart right after the job saw old bytes or none.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30 CKPTFWD_BATCH_WINDOW_MS=3000

"$FW" "$DIRECT/r" 4M --files 4 >/dev/null || fail "direct run failed"
KILL_AFTER_CLOSE_EMPTY=1 kill_after_close "$T/w.out" "$CAP/r" 4M --files 4
[[ $KILLED_RC -eq 0 ]] || fail "writer exit $KILLED_RC: $(cat "$T/w.out")"
for k in 0 1 2 3; do assert_store_has "$CAP/r.$k" "$DIRECT/r.$k"; done
ok "all 4 files were on the store when the process exited"
assert_verify_clean
