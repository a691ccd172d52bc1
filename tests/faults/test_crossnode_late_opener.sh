#!/usr/bin/env bash
# N-1 plain POSIX across nodes with late openers: the ranks of node n1 write their blocks
# of one new file and close it (their forwarder's batch window is 2 s, so it is not on the
# store yet); then both ranks of node n0 open it. Close-to-open makes both opens wait for
# n1's commit; they wake together and must share one version on n0 (started from n1's
# committed bytes), not stage one each: before, each got its own version and the newer
# one's commit dropped the other rank's blocks (zeros in the store, 5 of 5 runs).
# Ranks are plain processes with PMI_RANK/PMI_SIZE set by hand (no launcher needed).
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=10 CKPTFWD_LOG_LEVEL=info  # info: the wait is logged
export CKPTFWD_JOB_ID=late-$$  # the default name makes the socket path too long
# The coordination through the store alone, which a job falls back to when its forwarders
# cannot form a group (test_crossnode_group.sh tests the group).
export CKPTFWD_GROUP=0
rank() {  # rank NODE R ARGS...: rank R of 4 on NODE
  env CKPTFWD_NODE_ID=$1 PMI_RANK=$2 PMI_SIZE=4 LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "${@:3}"
}

"$FW" "$DIRECT/f" 4M >/dev/null || fail "direct run failed"
pids=()
for r in 2 3; do
  CKPTFWD_BATCH_WINDOW_MS=2000 rank n1 $r "$FW" "$CAP/f" 4M --interleave 1000 --hold-exit "$T/gate" \
    >"$T/n1.$r.out" 2>&1 &
  pids+=($!)
done
wait_for "[[ \$(cat '$T'/n1.*.out 2>/dev/null | grep -c '^closed') -eq 2 ]]" 60 ||
  fail "n1's ranks did not close: $(cat "$T"/n1.*.out)"
[[ $(count_containers "$STORE") -eq 0 ]] || fail "n1 committed before n0 opened: the test shows nothing"
for r in 0 1; do
  rank n0 $r "$FW" "$CAP/f" 4M --interleave 1000 >"$T/n0.$r.out" 2>&1 || fail "n0 rank $r failed: $(cat "$T/n0.$r.out")"  &
  pids+=($!)
done
wait "${pids[2]}" "${pids[3]}" || fail "an n0 rank failed"
touch "$T/gate"
wait "${pids[0]}" "${pids[1]}" || fail "an n1 rank failed"
grep -q "closed on another node" "$CKPTFWD_LOG" || fail "n0's opens did not wait for n1's commit: the test shows nothing"
assert_store_has "$CAP/f" "$DIRECT/f"
ok "late openers on n0 waited for n1's commit, shared one version, and the store holds every rank's blocks"
assert_verify_clean
