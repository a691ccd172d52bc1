#!/usr/bin/env bash
# A committed file is reopened with O_APPEND (then O_RDWR) and the forwarder is killed
# while it copies the old bytes into the new staged version (CKPTFWD_TEST_KILL_AT=
# open-copy, before the copy). What must hold: the partial copy never becomes a version;
# the open succeeds (the library re-sends it to the forwarder it starts again) and the
# file ends as a direct append would have left it. Before the recovery protocol, recovery
# committed the empty copy as the newest version and the re-sent open started from it: the
# live file shrank to the appended part.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30
job=$CKPTFWD_JOB_ID

for mode in append rdwr; do
  f=$mode.dat
  "$FW" "$DIRECT/$f" 32M >/dev/null && "$FW" "$DIRECT/$f" 8M --open "$mode" --seed 2 >/dev/null ||
    fail "direct run failed"
  export CKPTFWD_JOB_ID=$job-$mode-1
  with_lib "$FW" "$CAP/$f" 32M >"$T/$f.1.out" 2>&1 || fail "first write of $f failed: $(cat "$T/$f.1.out")"
  export CKPTFWD_JOB_ID=$job-$mode-2   # a new job: its own forwarder, the kill fires in it
  set +e
  CKPTFWD_TEST_KILL_AT=open-copy with_lib "$FW" "$CAP/$f" 8M --open "$mode" --seed 2 >"$T/$f.2.out" 2>&1
  rc=$?
  set -e
  kill_marker_fired open-copy || fail "the forwarder never reached the kill point open-copy"
  [[ $rc -eq 0 ]] || fail "$mode reopen: the application saw an error (exit $rc): $(cat "$T/$f.2.out")"
  assert_store_has "$CAP/$f" "$DIRECT/$f"
  ok "$mode: killed while copying the old bytes; the file is the 32M + 8M a direct $mode gives"
done
assert_verify_clean
