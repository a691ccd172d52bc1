#!/usr/bin/env bash
# A forwarder started on a staging tmpfs with no space left makes its session's activity
# word (wire/activity.h) with write(2): it fails with ENOSPC, the forwarder logs that its
# compression does not give way to the application's writes and serves on. Before, the
# word's file was sized with a hole and stamped through its mapping: the store into the
# hole killed the forwarder with SIGBUS before it recovered or served anything.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_JOB_ID=af-$$-$RANDOM CKPTFWD_CAPTURE="$CAPTURE"  # (short: the socket's path must fit)
stage_on_small_tmpfs 1m
dd if=/dev/zero of="$SMALL/fill" bs=4096 2>/dev/null || true  # (until no block is left)
rc=0
timeout 30 "$FWD" --daemon >"$T/daemon.out" 2>&1 || rc=$?
[[ $rc -eq 0 ]] || fail "the forwarder did not start on a full staging tmpfs (exit $rc): $(tail -3 "$T/daemon.out" "$CKPTFWD_LOG" 2>/dev/null)"
[[ -n "$(session_forwarders)" ]] || fail "the forwarder is gone after its start: $(tail -3 "$CKPTFWD_LOG")"
grep -q "activity: cannot write.*compression does not give way" "$CKPTFWD_LOG" ||
  fail "no warning about the activity word: $(cat "$CKPTFWD_LOG")"
timeout 30 "$CLI" stats --json >/dev/null || fail "the forwarder does not answer"
ok "on a full staging tmpfs the forwarder serves without its activity word, and says so"
# With room again, a file written through it is exact.
rm -f "$SMALL/fill"
printf 'checkpoint\n' >"$DIRECT/a.txt"
with_lib sh -c "printf 'checkpoint\n' > '$CAP/a.txt'" || fail "the write through the library failed"
drain
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "a file written once there is room again is restored exact"
