#!/usr/bin/env bash
# One new file written by ranks of two nodes with plain POSIX calls, no MPI-IO: every rank
# opens it O_CREAT (no O_TRUNC) and pwrites its own interleaved blocks (N-1). Blocks of
# 1000 bytes, so pages hold bytes of both nodes. Two simulated nodes (CKPTFWD_NODE_ID),
# two forwarders, one store. Before, each node committed a whole-file version and the
# later one won: the other node's bytes became zeros, silently. Now each node's version
# is a new file committed with a `create` record: whichever commits second is stacked on
# the first as the bytes it wrote, and the file is the union, byte for byte.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_cmd mpiexec.mpich
ckf_std_dirs
# The coordination through the store alone, which a job falls back to when its forwarders
# cannot form a group (test_crossnode_group.sh tests the group).
export CKPTFWD_GROUP=0

"$FW" "$DIRECT/n1.dat" 4M >/dev/null || fail "direct run failed"
for first in n0 n1; do
  f=$CAP/n1-$first-first.dat
  second=n1
  [[ $first == n1 ]] && second=n0
  # Every rank opens the file before any writes (the N-1 pattern: all open, all write, all
  # close). The second node's ranks then close and hold before exiting (their forwarder's
  # batch window is long): it commits only after the first node committed.
  n1_first_commits "$f" "$first" "$second" --interleave 1000
  n_records=$(grep -c "$(basename "$f")" "$STORE/MANIFEST")
  [[ $n_records -eq 1 ]] || fail "[$first first] both nodes committed before the gate ($n_records records)"
  touch "$T/gate"
  wait "$N1_JOB" || fail "[$first first] the job failed: $(tail -5 "$T/$first.out")"
  order=$first-first
  [[ ! -e "$f" ]] || fail "[$order] $f reached the disk directly (a fallback)"
  assert_store_has "$f" "$DIRECT/n1.dat"
  grep -q $'^create\t' "$STORE/MANIFEST" || fail "[$order] no create record in the MANIFEST"
  [[ $(grep -c "$(basename "$f")" "$STORE/MANIFEST") -eq 2 ]] || fail "[$order] expected one record per node"
  ok "[$order] the store holds every byte of both nodes (4 ranks, 1000-byte blocks)"
  # A restart through the library on either node reads the union too.
  for n in n0 n1; do
    env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_NODE_ID=$n cat "$f" >"$T/read.$n"
    assert_same_bytes "$DIRECT/n1.dat" "$T/read.$n" "[$order] read back on $n"
  done
done
assert_verify_clean
ok "verify clean"
