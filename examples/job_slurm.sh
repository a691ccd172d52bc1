#!/bin/bash
# A Slurm batch script running any MPI application with its checkpoints forwarded by
# ckptfwd. Set what is yours in the environment and submit:
#
#   export APP=/usr/bin/lmp ARGS="-in run.in -var dir $PWD/run/ckpt" CKPT_DIR=$PWD/run/ckpt
#   export RESTART_ARGS="-in restart.in -var dir $PWD/run/ckpt -var step {step}"
#   sbatch --export=ALL,CKPTFWD_HOME=/path/to/install examples/job_slurm.sh
#
#   APP, ARGS     the application and its arguments for a fresh start (APP required)
#   CKPT_DIR      the directory it writes its checkpoints into (default
#                 $SLURM_SUBMIT_DIR/run/ckpt); its files are captured, nothing else
#   RESTART_ARGS  its arguments to continue from a checkpoint, {step} replaced by the step
#                 of the latest complete one ("-" for files rewritten under one name);
#                 unset: ARGS every time (an application that
#                 finds its newest checkpoint itself)
#   SCHEMA        a schema file for raw binary checkpoints (CKPTFWD_SCHEMA)
#   CKPTFWD_HOME  the ckptfwd build dir or the PREFIX of its install
# Submitted again (after a time limit, a node failure), it restarts from the latest complete
# checkpoint. Arguments are split at spaces (no quoting inside ARGS).
# tests/integration/test_slurm.sh submits it with the demo application.
#
#SBATCH --job-name=ckptfwd-job
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --time=00:10:00
#SBATCH --output=ckptfwd-job-%j.out
set -euo pipefail

CKPTFWD_HOME=${CKPTFWD_HOME:?set CKPTFWD_HOME to the ckptfwd build or install directory}
CKPTFWD=$CKPTFWD_HOME/bin/ckptfwd
APP=${APP:?set APP to your application}
ARGS=${ARGS:-}
CKPT_DIR=${CKPT_DIR:-$SLURM_SUBMIT_DIR/run/ckpt}
mkdir -p "$CKPT_DIR"
CKPT_DIR=$(cd "$CKPT_DIR" && pwd)

# Only files matching these globs are captured; the forwarder is one per node and job
# (the job id comes from SLURM_JOB_ID), started on demand by the first rank that writes a
# checkpoint on that node. Staging is node-local /dev/shm, which counts against the job's
# memory, unless CKPTFWD_STAGE_DIR says otherwise: make sure it has room for one checkpoint
# per node. The forwarders' logs: $STORE/logs/$SLURM_JOB_ID.<node>.log.
export CKPTFWD_CAPTURE=${CKPTFWD_CAPTURE:-"$CKPT_DIR/*"}
STORE=${CKPTFWD_STORE:-$CKPT_DIR/.ckptfwd}
export CKPTFWD_STATS_FILE=${CKPTFWD_STATS_FILE:-$(dirname "$CKPT_DIR")/ckptfwd-stats-$SLURM_JOB_ID.jsonl}
[[ -n ${SCHEMA:-} ]] && export CKPTFWD_SCHEMA=$SCHEMA
# export CKPTFWD_STAGE_DIR=/tmp           # if /dev/shm is small
# export CKPTFWD_STAGE_LIMIT=8G           # beyond this a file falls back to a direct write

# The preload library and srun's MPI plugin, from the application's MPI: an MPICH-ABI MPI
# (MPICH, Intel MPI, MVAPICH, Cray MPICH: libmpi.so.12) gets libckptfwd-mpich.so, which
# also wraps its MPI-IO, and PMI2 (without a PMI plugin every rank would start as its own
# one-rank MPI_COMM_WORLD); Open MPI gets libckptfwd.so and PMIx; a serial code
# libckptfwd.so.
LIB=$CKPTFWD_HOME/lib/libckptfwd.so
SRUN_MPI=()
if ldd "$(command -v "$APP")" 2>/dev/null | grep -qE 'lib(mpi|mpich)\.so\.12 '; then
  LIB=$CKPTFWD_HOME/lib/libckptfwd-mpich.so
  SRUN_MPI=(--mpi=pmi2)
elif ldd "$(command -v "$APP")" 2>/dev/null | grep -qE 'libmpi\.so\.[0-9]+ '; then
  SRUN_MPI=(--mpi=pmix)
fi
echo "job_slurm: $APP under $LIB, srun ${SRUN_MPI[*]}, job $SLURM_JOB_ID"

# Restart from the latest complete checkpoint, read from the store.
run_args=$ARGS
if [[ -n ${RESTART_ARGS:-} ]] && step=$("$CKPTFWD" ls --latest "$STORE" 2>/dev/null); then
  echo "job_slurm: restarting from checkpoint $step (ckptfwd ls --steps $STORE)"
  run_args=${RESTART_ARGS//\{step\}/$step}
fi

# LD_PRELOAD only to the application's tasks, not to this batch shell. srun starts them
# through each node's slurmd, which sets SLURMD_NODENAME: one forwarder per Slurm node.
# When srun returns 0, every rank has waited for its checkpoints to be committed (a rank
# whose files could not be committed exits 75).
# shellcheck disable=SC2086  # ARGS are split at spaces on purpose
srun "${SRUN_MPI[@]}" --export=ALL,LD_PRELOAD="$LIB" "$APP" $run_args

# One task per node: commit what a lost forwarder left staged there, and fail while
# anything the ranks closed is not on the store.
srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 \
  "$CKPTFWD" drain
"$CKPTFWD" ls --steps "$STORE"
"$CKPTFWD" verify "$STORE"
