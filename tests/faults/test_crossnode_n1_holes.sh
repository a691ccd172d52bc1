#!/usr/bin/env bash
# One new file written by ranks of two nodes with plain POSIX calls (N-1: every rank opens
# it O_CREAT without O_TRUNC and pwrites its own interleaved blocks), staged on tmpfs as
# by default. Two simulated nodes (CKPTFWD_NODE_ID), two forwarders, one store. In each
# node's staged file the other node's blocks are holes, and on tmpfs a read of a hole
# through a mapping makes a page of zeros there: the forwarder's HDF5 signature probe
# does such reads, and so does a program that maps the file. Before, the commit counted
# those pages as this node's bytes, and the node that committed second put zeros over the
# other node's blocks (seen: every fsync'd 2 MiB-block run of a loaded machine, and every
# run where a rank maps the file before its close).
#   part 1: both nodes at once, pwrite then fsync then close (1000-byte, 8 KiB, 2 MiB blocks)
#   part 2: each rank reads its file through a mapping before the close; one node commits
#           first, the other holds its commit back (both orders)
# The restored file and a read through the library on either node must be the union of
# every rank's blocks, byte for byte.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_cmd mpiexec.mpich
ckf_std_dirs
ckf_stage_on_tmpfs

check_union() {
  local f=$1 what=$2 n
  [[ ! -e "$f" ]] || fail "[$what] $f reached the disk directly (a fallback)"
  assert_store_has "$f" "$DIRECT/n1.dat"
  for n in n0 n1; do
    env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_NODE_ID=$n cat "$f" >"$T/read.$n"
    assert_same_bytes "$DIRECT/n1.dat" "$T/read.$n" "[$what] read back on $n"
  done
}

"$FW" "$DIRECT/n1.dat" 4M >/dev/null || fail "direct run failed"
for block in 2M 1000 8K; do
  for ranks in 1 2; do
    f=$CAP/n1-fsync-$block-$ranks.dat
    env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" timeout 120 mpiexec.mpich \
      -n "$ranks" -env CKPTFWD_NODE_ID n0 "$FW" "$f" 4M --interleave "$block" --fsync : \
      -n "$ranks" -env CKPTFWD_NODE_ID n1 "$FW" "$f" 4M --interleave "$block" --fsync \
      >"$T/job.out" 2>&1 || fail "[$block x $ranks] the job failed: $(tail -5 "$T/job.out")"
    grep -q '^fsync' "$T/job.out" && fail "[$block x $ranks] an fsync failed: $(cat "$T/job.out")"
    check_union "$f" "fsync, $block x $ranks"
    ok "[fsync, $block blocks, $ranks rank(s) per node] every byte of both nodes"
  done
done

for first in n0 n1; do
  second=n1
  [[ $first == n1 ]] && second=n0
  f=$CAP/n1-mapped-$first-first.dat
  n1_first_commits "$f" "$first" "$second" --interleave 512K --mmap-read
  touch "$T/gate"
  wait "$N1_JOB" || fail "[$first first] the job failed: $(tail -5 "$T/$first.out")"
  grep -q '^mmap' "$T/$first.out" && fail "[$first first] mmap failed: $(cat "$T/$first.out")"
  check_union "$f" "mapped reads, $first first"
  ok "[mapped reads of the holes, $first commits first] every byte of both nodes"
done
assert_verify_clean
ok "verify clean"
