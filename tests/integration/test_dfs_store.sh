#!/usr/bin/env bash
# The store on a real distributed file system: a GlusterFS volume with its default
# options, one FUSE client per simulated node (tests/integration/dfs.sh), each node's
# ranks and forwarder in a mount namespace where $DFS is that node's client, staging on
# tmpfs as by default. What holds across nodes today (docs/store-filesystems.md says what
# does not yet):
#   part 1: 4 nodes x 2 ranks at once, each node writing per-rank files of 3 steps and an
#           fsync'd one into a directory of its own (one store per node directory), all
#           through their own clients; every file restored exactly through another
#           node's client, `verify` clean there.
#   part 2: node 0's 2 ranks write per-rank files and one N-1 file (pwrite, pages shared
#           by the ranks); the job restarts on node 1: reads through the library there
#           (its own client and forwarder) give every byte, and so does a restore.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/../faults/lib_faults.sh"
source "$(dirname "$0")/dfs.sh"
need_cmd mpiexec.mpich
dfs_setup 4
ckf_stage_on_tmpfs
direct=$T/direct
mkdir -p "$direct"
"$FW" "$direct/n1.dat" 4M >/dev/null || fail "direct run failed"
for r in 0 1 2 3 4 5 6 7; do
  "$FW" "$direct/rank$r.dat" 1M --seed $((r + 1)) >/dev/null || fail "direct run failed"
done

# run_job WHAT NODES CMD...: 2 ranks on each of nodes 0..NODES-1 run CMD under the library
# (inside the node's namespace: dfs.sh), capturing $CAPTURE with @NODE@ replaced by the
# node's id.
run_job() {
  local what=$1 nodes=$2 i args=()
  shift 2
  for ((i = 0; i < nodes; i++)); do
    ((i > 0)) && args+=(:)
    args+=(-n 2 -env CKPTFWD_NODE_ID "n$i" "$DFS_ON_NODE" "$i"
      env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="${CAPTURE//@NODE@/n$i}" "$@")
  done
  timeout 180 mpiexec.mpich "${args[@]}" >"$T/job.out" 2>&1 ||
    fail "[$what] the job failed: $(tail -5 "$T/job.out")"
  if grep -qv '^done$' "$T/job.out"; then
    fail "[$what] a call failed: $(grep -v '^done$' "$T/job.out" | head -3)"
  fi
}

# Part 1: each node its own directory (its own store), all nodes at once.
CAPTURE="$DFS/pernode/@NODE@/*"
for i in 0 1 2 3; do mkdir -p "${DFS_MNT[0]}/pernode/n$i"; done
for step in 1 2 3; do
  run_job "per-node directories, step $step" 4 bash -c \
    "exec '$FW' \"$DFS/pernode/\$CKPTFWD_NODE_ID/step$step-rank\$PMI_RANK.dat\" 1M --seed \$((PMI_RANK + 1)) --fsync"
done
for i in 0 1 2 3; do
  store=${DFS_MNT[3]}/pernode/n$i/.ckptfwd
  out=$T/restored-n$i
  timeout 120 "$CLI" restore "$store" --to "$out" >"$T/restore.out" 2>&1 ||
    fail "[per-node directories] restore of n$i's store through node 3's client: $(tail -3 "$T/restore.out")"
  for step in 1 2 3; do
    for r in $((2 * i)) $((2 * i + 1)); do
      assert_same_bytes "$direct/rank$r.dat" \
        "$(restored_file "$out" "$DFS/pernode/n$i/step$step-rank$r.dat")" "[per-node] n$i step $step rank $r"
    done
  done
  timeout 120 "$CLI" verify "$store" >"$T/verify.out" 2>&1 ||
    fail "[per-node directories] verify of n$i's store: $(tail -5 "$T/verify.out")"
done
ok "[4 nodes x 2 ranks, a directory each, on GlusterFS] 24 files restored exactly through another node's client, verify clean"

# Part 2: written on node 0, restarted on node 1. Its capture globs are others: part 1's
# forwarders (the same job) must have left first, or its ranks would be refused.
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "part 1's forwarders did not exit when idle"
CAP=$DFS/ckpt
CAPTURE="$CAP/*"
mkdir -p "${DFS_MNT[0]}/ckpt"
run_job "node 0 per-rank" 1 bash -c "exec '$FW' \"$CAP/rank\$PMI_RANK.dat\" 1M --seed \$((PMI_RANK + 1))"
run_job "node 0 N-1" 1 "$FW" "$CAP/n1.dat" 4M --interleave 1000 --fsync
for f in rank0 rank1 n1; do
  CKPTFWD_NODE_ID=n1 "$DFS_ON_NODE" 1 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
    cat "$CAP/$f.dat" >"$T/read.$f" || fail "[restart on node 1] reading $f failed"
  assert_same_bytes "$direct/$f.dat" "$T/read.$f" "[restart on node 1] $f"
done
out=$T/restored-ckpt
timeout 120 "$CLI" restore "${DFS_MNT[1]}/ckpt/.ckptfwd" --to "$out" >"$T/restore.out" 2>&1 ||
  fail "[restart on node 1] restore: $(tail -3 "$T/restore.out")"
assert_same_bytes "$direct/n1.dat" "$(restored_file "$out" "$CAP/n1.dat")" "[restart on node 1] restore of n1"
ok "[written on node 0, restarted on node 1, on GlusterFS] per-rank and N-1 files exact"
