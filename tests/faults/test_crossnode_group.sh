#!/usr/bin/env bash
# Files shared across nodes through plain POSIX calls, with the job's forwarders as a
# group (src/forwarder/group/group.h): posix_shared's patterns (header then all ranks, N-1
# pwrite with and without fsync, a file handed from rank to rank, temp-and-rename, one
# node renaming and unlinking another node's files) on 2 nodes of 2 ranks and 4 nodes of
# 1 rank (CKPTFWD_NODE_ID per node, one store). Each rank
# stats and reads the whole file back in the job, after everyone closed it: the bytes of
# the other nodes too; the store then holds exactly what a run without the library leaves,
# and `verify` is clean. The group answers for the files: nothing is noted in the store's
# close-to-open journal (.pending-<job>).
# Before the group (and with CKPTFWD_GROUP=0 still) N-1 read-backs get other nodes' blocks
# wrong, and every handoff waits for the other node's commit (seconds each).
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_cmd mpiexec.mpich
PS=$BUILD/bin/posix_shared
[[ -x "$PS" ]] || skip "posix_shared not built (needs mpicc.mpich)"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=10 CKPTFWD_JOB_ID=grp-$$

# run_nodes NODES PER MODE FILE: posix_shared under the library, NODES simulated nodes of
# PER ranks each (node i's ranks are the i-th block of ranks).
run_nodes() {
  local nodes=$1 per=$2 mode=$3 f=$4 args=() i
  for ((i = 0; i < nodes; i++)); do
    [[ $i -gt 0 ]] && args+=(:)
    args+=(-n "$per" -env CKPTFWD_NODE_ID "n$i" "$PS" "$mode" "$f")
  done
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" timeout 120 mpiexec.mpich "${args[@]}"
}

for mode in header n1 n1sync chain rename replace; do
  mpiexec.mpich -n 4 "$PS" "$mode" "$DIRECT/$mode.dat" >/dev/null || fail "direct $mode run failed"
done
for layout in "2 2" "4 1"; do
  read -r nodes per <<<"$layout"
  for mode in header n1 n1sync chain rename replace; do
    f=$CAP/$mode-$nodes.dat
    tag="[$mode, $nodes nodes x $per]"
    run_nodes "$nodes" "$per" "$mode" "$f" >"$T/run.out" 2>&1 ||
      fail "$tag the job failed: $(grep -m3 -e MISMATCH -e rank "$T/run.out")"
    [[ ! -e "$f" ]] || fail "$tag $f reached the disk directly (a fallback)"
    assert_store_has "$f" "$DIRECT/$mode.dat"
    if [[ $mode == replace ]]; then
      assert_store_has "$f.moved" "$DIRECT/$mode.dat.moved"
      "$CLI" ls "$STORE" >"$T/ls.out" 2>&1 || fail "$tag ckptfwd ls failed: $(tail -3 "$T/ls.out")"
      for gone in "$f.tmp" "$f.part" "$f.old"; do
        ! grep -qF "$gone" "$T/ls.out" || fail "$tag the store still lists $gone"
      done
    fi
    ok "$tag every rank read back every node's bytes; the store holds them"
  done
done
[[ ! -e $STORE/.pending-$CKPTFWD_JOB_ID ]] ||
  fail "the job noted its closes in the store's journal: $(head -3 "$STORE/.pending-$CKPTFWD_JOB_ID")"
assert_verify_clean
ok "verify clean"
