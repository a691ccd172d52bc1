#!/bin/bash
# A Slurm batch script running the demo application with ckptfwd. Submit with
#   sbatch --export=ALL,CKPTFWD_HOME=/path/to/install examples/job_slurm.sh
# where CKPTFWD_HOME is the build dir or the PREFIX of `make install PREFIX=...`.
# Submitted again (after a time limit, a node failure), it restarts from the newest
# checkpoint. STEPS and CKPT_EVERY (exported the same way) change the run's length and
# checkpoint interval; tests/integration/test_slurm.sh submits it with short ones.
#
#SBATCH --job-name=stencil3d-ckptfwd
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --time=00:10:00
#SBATCH --output=stencil3d-%j.out
set -euo pipefail

CKPTFWD_HOME=${CKPTFWD_HOME:?set CKPTFWD_HOME to the ckptfwd build or install directory}
# Your application; the demo app stencil3d is only in a build dir (not installed).
APP=${APP:-$CKPTFWD_HOME/bin/stencil3d}
RUN_DIR=${RUN_DIR:-$SLURM_SUBMIT_DIR/stencil-run}   # on the parallel file system
CKPT="$RUN_DIR/ckpt"
mkdir -p "$CKPT"

# Only files matching these globs are captured; the forwarder is one per node and job
# (the job id comes from SLURM_JOB_ID), started on demand by the first rank that writes a
# checkpoint on that node. Staging is node-local /dev/shm unless CKPTFWD_STAGE_DIR says
# otherwise; make sure it has room for one checkpoint per node.
export CKPTFWD_CAPTURE="$CKPT/*"
export CKPTFWD_STATS_FILE="$RUN_DIR/ckptfwd-stats-$SLURM_JOB_ID.jsonl"
# export CKPTFWD_STORE="$RUN_DIR/store"   # default: $CKPT/.ckptfwd
# export CKPTFWD_STAGE_DIR=/tmp           # if /dev/shm is small
# export CKPTFWD_STAGE_LIMIT=8G           # beyond this a file falls back to a direct write

RESTART=()
if LD_PRELOAD="$CKPTFWD_HOME/lib/libckptfwd.so" ls "$CKPT" 2>/dev/null | grep -q '^ckpt_.*\.bin$'; then
  RESTART=(--restart)
fi

# Pass LD_PRELOAD only to the application's tasks, not to this batch shell.
# --mpi=pmi2: how an MPICH application finds its peers under srun (without a PMI plugin,
# every rank would start as its own one-rank MPI_COMM_WORLD); an Open MPI application
# takes --mpi=pmix. srun starts the tasks through each node's slurmd, which sets
# SLURMD_NODENAME: one forwarder per Slurm node (README, "Running under Slurm").
# With MPICH's own launcher instead of srun:
#   LD_PRELOAD=$CKPTFWD_HOME/lib/libckptfwd.so mpiexec.mpich -n "$SLURM_NTASKS" "$APP" ...
srun --mpi=pmi2 --export=ALL,LD_PRELOAD="$CKPTFWD_HOME/lib/libckptfwd.so" \
  "$APP" --steps "${STEPS:-400}" --ckpt-every "${CKPT_EVERY:-50}" --ckpt-dir "$CKPT" \
  "${RESTART[@]}" --out "$RUN_DIR/final.digest"

# When srun returns 0, every rank has waited for its checkpoints to be committed (a rank
# whose files could not be committed exits 75). One task per node: commit what a lost
# forwarder left staged there, and fail while anything the ranks closed is not on the store.
srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 \
  "$CKPTFWD_HOME/bin/ckptfwd" drain
"$CKPTFWD_HOME/bin/ckptfwd" verify "$CKPT/.ckptfwd"
