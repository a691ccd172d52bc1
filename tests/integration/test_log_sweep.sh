#!/usr/bin/env bash
# A forwarder's log lines are not left behind in the staging directory
# (src/forwarder/daemon/log_place.h): a forwarder started before the capture directory
# exists logs to <stage>/ckptfwd-log-<uid>-<job>-<node>.log; killed there (SIGKILL: no
# exit to move them), its lines are moved into <store>/logs/<job>.<node>.log by the job's
# next forwarder on the node, once it serves, and the fallback file is gone.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
unset CKPTFWD_LOG
export CKPTFWD_LOG_LEVEL=info CKPTFWD_IDLE_EXIT=60
rmdir "$CAP"   # the application makes it later

# A process that loads the library starts the node's forwarder early; no capture dir yet.
env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" sleep 30 &
holder=$!
fallback=
for ((i = 0; i < 100; i++)); do
  fallback=$(ls "$CKPTFWD_STAGE_DIR"/ckptfwd-log-"$(id -u)"-"$CKPTFWD_JOB_ID"-*.log 2>/dev/null | head -1) || true
  [[ -n $fallback && -s $fallback ]] && break
  sleep 0.1
done
[[ -s $fallback ]] || fail "the early forwarder wrote no fallback log in $CKPTFWD_STAGE_DIR: $(ls -a "$CKPTFWD_STAGE_DIR")"
first=$(session_forwarders | head -1)
[[ -n $first ]] || fail "no forwarder runs for the job"
kill -KILL "$first" "$holder" 2>/dev/null
wait "$holder" 2>/dev/null || true
grep -q "pid=$first " "$fallback" || fail "the fallback log has no line of forwarder $first: $(cat "$fallback")"

mkdir -p "$CAP"
with_lib "$WRITER" big "$CAP/a.bin" 100K || fail "the application exited $?"
drain
log=$(ls "$STORE"/logs/"$CKPTFWD_JOB_ID".*.log 2>/dev/null | head -1) || true
[[ -s $log ]] || fail "no log in $STORE/logs: $(ls -a "$STORE" "$STORE/logs" 2>&1)"
grep -q "pid=$first " "$log" ||
  fail "the store's log $log has no line of the killed forwarder $first (left in $fallback: $(ls "$fallback" 2>&1))"
[[ ! -e $fallback ]] || fail "the fallback log $fallback is still there"
ok "the killed forwarder's lines moved from the staging directory into $log"
