#!/usr/bin/env bash
# MPI-IO on a file shared across nodes, read back collectively before the close: each rank
# writes its strided blocks with MPI_File_write_all, then reads them with
# MPI_File_read_all. ROMIO's collective buffering for reads (romio_cb_read) lets an
# aggregator read the blocks of ranks on other nodes from its own node's staged copy,
# where they are not yet: before the library turned it off for files shared across nodes,
# ranks got zeros back and computed on them. Two simulated nodes (CKPTFWD_NODE_ID), 4
# ranks; the file on the store must also equal the direct run's.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_cmd mpiexec.mpich
RB=$BUILD/bin/mpiio_readback
[[ -x "$RB" ]] || skip "mpiio_readback not built (needs mpicc.mpich)"
ckf_std_dirs

timeout 120 mpiexec.mpich -n 4 "$RB" "$DIRECT/shared.dat" >"$T/direct.out" 2>&1 ||
  fail "direct run failed: $(tail -3 "$T/direct.out")"
for hint in default enable; do
  rm -f "$CAP/shared.dat"
  # ROMIO reads hints from the file ROMIO_HINTS names: the default, or a user forcing it on.
  [[ $hint == enable ]] && echo "romio_cb_read enable" >"$T/hints.$hint" || : >"$T/hints.$hint"
  env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" ROMIO_HINTS="$T/hints.$hint" \
    timeout 120 mpiexec.mpich -n 2 -env CKPTFWD_NODE_ID n0 "$RB" "$CAP/shared.dat" : \
    -n 2 -env CKPTFWD_NODE_ID n1 "$RB" "$CAP/shared.dat" >"$T/cap.$hint.out" 2>&1 &
  wait $! || fail "[$hint hints] ranks read back other bytes than they wrote: $(grep -m4 -E 'MISMATCH|FAIL|rror' "$T/cap.$hint.out")"
  ok "[romio_cb_read $hint] every rank read back its own bytes before the close"
done
for n in n0 n1; do CKPTFWD_NODE_ID=$n drain; done
assert_store_has "$CAP/shared.dat" "$DIRECT/shared.dat"
ok "the store holds the direct run's bytes"
