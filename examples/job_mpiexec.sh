#!/usr/bin/env bash
# A job script for a plain `mpiexec` launch (one node, or a machine file) of any MPI or
# serial application, its checkpoints forwarded by ckptfwd. Set what is yours and run it:
#
#   APP=/usr/bin/lmp ARGS="-in run.in -var dir $PWD/run/ckpt" CKPT_DIR=$PWD/run/ckpt \
#   RESTART_ARGS="-in restart.in -var dir $PWD/run/ckpt -var step {step}" NP=4 \
#     examples/job_mpiexec.sh
#
#   APP      the application (required); ARGS its arguments for a fresh start
#   CKPT_DIR the directory it writes its checkpoints into (default $PWD/run/ckpt); its
#            files are captured (CKPTFWD_CAPTURE, default "$CKPT_DIR/*"), nothing else
#   RESTART_ARGS  its arguments to continue from a checkpoint, {step} replaced by the step
#            of the latest complete one (`ckptfwd ls --latest`; "-" for files rewritten
#            under one name, which have no step); unset: ARGS every time
#            (an application that finds its newest checkpoint itself)
#   NP       ranks (default 4); MPIEXEC the launcher (default: the one of the
#            application's MPI, found with ldd) and MPIEXEC_FLAGS its options
#            (--oversubscribe, a machine file); SCHEMA a schema file for raw binary
#            checkpoints (CKPTFWD_SCHEMA)
#   CKPTFWD_HOME  the ckptfwd build or install directory (default: where `ckptfwd` on
#            PATH lives)
# Arguments are split at spaces (no quoting inside ARGS; edit the launch line for that).
#
# The application is not modified or relinked: ckptfwd is injected with LD_PRELOAD, and
# only files whose absolute path matches CKPTFWD_CAPTURE are captured. The demo:
#   APP=build/bin/stencil3d ARGS="--steps 40 --ckpt-every 5 --ckpt-dir $PWD/run/ckpt" \
#   RESTART_ARGS="--steps 40 --ckpt-every 5 --ckpt-dir $PWD/run/ckpt --restart" \
#   CKPTFWD_HOME=$PWD/build examples/job_mpiexec.sh
set -euo pipefail

if [[ -z ${CKPTFWD_HOME:-} ]]; then
  cli=$(command -v ckptfwd) || { echo "set CKPTFWD_HOME, or put ckptfwd on PATH" >&2; exit 2; }
  CKPTFWD_HOME=$(dirname "$(dirname "$cli")")
fi
CKPTFWD=$CKPTFWD_HOME/bin/ckptfwd
APP=${APP:?set APP to your application}
ARGS=${ARGS:-}
NP=${NP:-4}
CKPT_DIR=${CKPT_DIR:-$PWD/run/ckpt}
mkdir -p "$CKPT_DIR"
CKPT_DIR=$(cd "$CKPT_DIR" && pwd)   # capture globs are absolute paths

export CKPTFWD_CAPTURE=${CKPTFWD_CAPTURE:-"$CKPT_DIR/*"}
# The store: a few containers and a MANIFEST beside the checkpoints (default place), or
# CKPTFWD_STORE. Everything below reads it without the library.
STORE=${CKPTFWD_STORE:-$CKPT_DIR/.ckptfwd}
# One job id per run names the forwarder's log: $STORE/logs/<job>.<node>.log.
export CKPTFWD_JOB_ID=${CKPTFWD_JOB_ID:-run-$(date +%Y%m%d-%H%M%S)-$$}
[[ -n ${SCHEMA:-} ]] && export CKPTFWD_SCHEMA=$SCHEMA
# export CKPTFWD_STAGE_DIR=/tmp     # staging is /dev/shm (the job's memory) unless set
# export CKPTFWD_LOG_LEVEL=info     # more in the log (default: warnings and errors)

# The preload library: libckptfwd-mpich.so for an application of an MPICH-ABI MPI (MPICH,
# Intel MPI, MVAPICH, Cray MPICH: libmpi.so.12), whose MPI-IO it also wraps; libckptfwd.so
# for everything else (Open MPI, serial codes, scripts: POSIX and stdio capture).
mpi=none
if ldd "$(command -v "$APP")" 2>/dev/null | grep -qE 'lib(mpi|mpich)\.so\.12 '; then
  mpi=mpich
elif ldd "$(command -v "$APP")" 2>/dev/null | grep -qE 'libmpi\.so\.[0-9]+ '; then
  mpi=openmpi
fi
LIB=$CKPTFWD_HOME/lib/libckptfwd.so
[[ $mpi == mpich ]] && LIB=$CKPTFWD_HOME/lib/libckptfwd-mpich.so
if [[ -z ${MPIEXEC:-} ]]; then
  MPIEXEC=mpiexec
  [[ $mpi == mpich ]] && command -v mpiexec.mpich >/dev/null && MPIEXEC=mpiexec.mpich
  [[ $mpi == openmpi ]] && command -v mpiexec.openmpi >/dev/null && MPIEXEC=mpiexec.openmpi
fi
# Open MPI's launcher passes only the variables named with -x to ranks on other nodes.
launcher_env=()
if [[ $mpi == openmpi ]]; then
  for v in $(env | grep -o '^CKPTFWD_[A-Z_]*'); do launcher_env+=(-x "$v"); done
fi

echo "job_mpiexec: $APP ($mpi MPI) under $LIB, $NP ranks of $MPIEXEC, job $CKPTFWD_JOB_ID"

# Restart from the latest complete checkpoint, read from the store (the checkpoints live
# there, not as files in CKPT_DIR).
run_args=$ARGS
if [[ -n ${RESTART_ARGS:-} ]] && step=$("$CKPTFWD" ls --latest "$STORE" 2>/dev/null); then
  echo "job_mpiexec: restarting from checkpoint $step (ckptfwd ls --steps $STORE)"
  run_args=${RESTART_ARGS//\{step\}/$step}
fi

# LD_PRELOAD for the application's processes only (env on each rank), not the launcher.
# When the launcher returns 0, every checkpoint is committed to the store: each process
# waits for its files at exit (one whose files could not be committed exits 75).
# shellcheck disable=SC2086  # ARGS and MPIEXEC_FLAGS are split at spaces on purpose
"$MPIEXEC" ${MPIEXEC_FLAGS:-} "${launcher_env[@]}" -n "$NP" env LD_PRELOAD="$LIB" "$APP" $run_args

# Commits what a lost forwarder left staged on this node; exits 1 while anything the job
# closed is not on the store.
"$CKPTFWD" drain
# Without the library: the checkpoints, the latest complete one marked, and a check of
# every byte. The forwarder's log: $STORE/logs/$CKPTFWD_JOB_ID.<node>.log.
"$CKPTFWD" ls --steps "$STORE"
"$CKPTFWD" verify "$STORE"
