#!/usr/bin/env bash
# Close-to-open across nodes, as on a PFS: once close() returned on one node, an open of
# that path on another node of the same job sees those bytes, although they are only in
# the first node's staging (its batch window is 3 s here). Two simulated nodes
# (CKPTFWD_NODE_ID), two forwarders, one store:
#  1. node n0 writes a.dat and closes it; node n1 reads it right away;
#  2. node n0 writes b.dat and closes it; node n1 appends to it right away (a file passed
#     from rank to rank, each appending its part).
# Before, n1 got ENOENT (or the older bytes), and n1's append started from nothing: n0's
# part was lost.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_BATCH_WINDOW_MS=3000 CKPTFWD_IDLE_EXIT=30
export CKPTFWD_JOB_ID=c2o-$$  # the default name makes the socket path too long
on_node() { env CKPTFWD_NODE_ID=$1 LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "${@:2}"; }

"$FW" "$DIRECT/a.dat" 8M >/dev/null
"$FW" "$DIRECT/b.dat" 4M >/dev/null && "$FW" "$DIRECT/b.dat" 2M --open append --seed 2 >/dev/null ||
  fail "direct run failed"

on_node n0 "$FW" "$CAP/a.dat" 8M --hold-exit "$T/gate1" >"$T/a.out" 2>&1 &
w0=$!
wait_line "$T/a.out" closed
[[ $(count_containers "$STORE") -eq 0 ]] || fail "a.dat was committed already: the test shows nothing"
on_node n1 cat "$CAP/a.dat" >"$T/a.read" 2>"$T/a.err" || fail "n1 cannot read a.dat right after n0 closed it: $(cat "$T/a.err")"
assert_same_bytes "$DIRECT/a.dat" "$T/a.read" "a.dat read on n1 right after the close on n0"
ok "a.dat closed on n0 is read whole on n1 at once"
touch "$T/gate1"
wait "$w0" || fail "n0's writer failed: $(cat "$T/a.out")"

on_node n0 "$FW" "$CAP/b.dat" 4M --hold-exit "$T/gate2" >"$T/b.out" 2>&1 &
w0=$!
wait_line "$T/b.out" closed
on_node n1 "$FW" "$CAP/b.dat" 2M --open append --seed 2 >"$T/b1.out" 2>&1 ||
  fail "n1's append failed: $(cat "$T/b1.out")"
touch "$T/gate2"
wait "$w0" || fail "n0's writer failed: $(cat "$T/b.out")"
assert_store_has "$CAP/b.dat" "$DIRECT/b.dat"
ok "b.dat: n0's part then n1's appended part, as a direct run leaves it"
assert_verify_clean
