#!/usr/bin/env bash
# A forgotten job does not resurrect an old version. Job J writes ckpt.bin (v1), then its
# forwarder and its rank die with v1 staged (closed and not yet committed: a batch window
# of 60 s; or still open, half written). Job K writes v2 through its own forwarder and
# commits it. Later J's forwarder is started again, as its log advises, and drained. What
# must hold: a restart reads v2; v1 is kept aside in the store, under
# <dir>/.ckptfwd-aside/ckpt.bin.job-<J>.v<N>, with its own bytes, and the log says why.
# Before, the recovery committed v1 over v2 and verify was clean.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30
base=$CKPTFWD_JOB_ID
F=$CAP/ckpt.bin
"$FW" "$DIRECT/v1" 3M --seed 1 >/dev/null && "$FW" "$DIRECT/v2" 2M --seed 2 >/dev/null ||
  fail "direct runs failed"
head -c 1M "$DIRECT/v1" >"$DIRECT/v1-half"

for how in closed open; do
  J=$base-$how-j K=$base-$how-k
  export CKPTFWD_JOB_ID=$J
  if [[ $how == closed ]]; then
    CKPTFWD_BATCH_WINDOW_MS=60000 with_lib "$FW" "$F" 3M --seed 1 --hold-exit "$T/gate-$how" >"$T/j.out" 2>&1 &
    writer=$!
    wait_line "$T/j.out" closed
    oracle=$DIRECT/v1
  else
    with_lib "$FW" "$F" 3M --seed 1 --pause-at 1M "$T/gate-$how" >"$T/j.out" 2>&1 &
    writer=$!
    wait_line "$T/j.out" "paused at 1048576"
    oracle=$DIRECT/v1-half
  fi
  # with_lib runs in a subshell: its child is the writer (the rank) that dies with it.
  kill -KILL $(pgrep -P "$writer") "$writer" 2>/dev/null
  wait "$writer" 2>/dev/null || true
  kill_forwarders
  [[ $(count_containers "$STORE") -eq $([[ $how == closed ]] && echo 0 || echo 2) ]] ||
    fail "v1 of job J was committed before its forwarder died: the test shows nothing"

  CKPTFWD_JOB_ID=$K with_lib "$FW" "$F" 2M --seed 2 >/dev/null || fail "job K failed"
  CKPTFWD_JOB_ID=$K drain

  CKPTFWD_CAPTURE=$CAPTURE timeout 60 "$FWD" --daemon || fail "restarting job J's forwarder failed"
  CKPTFWD_CAPTURE=$CAPTURE timeout 120 "$CLI" drain >/dev/null || fail "drain of job J exited $?"

  CKPTFWD_JOB_ID=$base-$how-read with_lib cmp "$F" "$DIRECT/v2" >"$T/cmp.out" 2>&1 ||
    fail "($how) after job J's recovery a restart does not read job K's v2: $(cat "$T/cmp.out")"
  aside=$("$CLI" ls "$STORE" 2>/dev/null | grep -o "$CAP/.ckptfwd-aside/ckpt.bin.job-$J.v[0-9]*" | head -1) || true
  [[ -n "$aside" ]] || fail "($how) v1 is not kept aside in the store: $("$CLI" ls "$STORE" 2>&1 | tail -5)"
  assert_store_has "$aside" "$oracle"
  grep -q "kept aside as $aside" "$CKPTFWD_LOG" || fail "($how) the log does not say v1 was kept aside"
  ok "($how) a restart reads v2; v1 is kept aside as $aside"
  assert_verify_clean
  kill_forwarders
done
