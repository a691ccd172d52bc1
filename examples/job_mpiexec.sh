#!/usr/bin/env bash
# A job script for a plain `mpiexec` launch (one node, or a machine file) that runs the demo
# application with its checkpoints forwarded by ckptfwd. Copy it and change APP and CKPT.
#
#   examples/job_mpiexec.sh [BUILD]
#
# The application is not modified or relinked: ckptfwd is injected with LD_PRELOAD, and
# only files whose absolute path matches CKPTFWD_CAPTURE are captured. Everything else
# (input decks, logs, --out files) is written as usual.
set -euo pipefail

BUILD=$(cd "${1:-build}" && pwd)       # or the PREFIX of `make install PREFIX=...`
# Your application; the demo app stencil3d is only in a build dir (not installed).
APP=${APP:-$BUILD/bin/stencil3d}
RUN_DIR=${RUN_DIR:-$PWD/stencil-run}   # on the parallel file system in a real job
CKPT="$RUN_DIR/ckpt"
mkdir -p "$CKPT"

export CKPTFWD_CAPTURE="$CKPT/*"          # colon-separated globs on absolute paths
# export CKPTFWD_STORE="$RUN_DIR/store"   # where containers go (default: $CKPT/.ckptfwd)
export CKPTFWD_STATS_FILE="$RUN_DIR/ckptfwd-stats.jsonl"   # forwarder counters at exit
# export CKPTFWD_JOB_ID=...                # default: SLURM_JOB_ID / PBS_JOBID / LSB_JOBID /
#                                          # FLUX_JOB_ID, else a digest of CKPTFWD_CAPTURE

# Restart from the newest complete checkpoint if there is one. The check runs through the
# library too, because the checkpoints live in the store, not as files in $CKPT.
RESTART=()
if LD_PRELOAD="$BUILD/lib/libckptfwd.so" ls "$CKPT" 2>/dev/null | grep -q '^ckpt_.*\.bin$'; then
  RESTART=(--restart)
fi

# LD_PRELOAD on the mpiexec line: MPICH's launcher passes the environment to every rank.
# When mpiexec returns 0, every checkpoint is committed to the store (exit waits for it; a
# rank whose files could not be committed exits 75, and so does not mpiexec with 0).
LD_PRELOAD="$BUILD/lib/libckptfwd.so" \
  mpiexec.mpich -n 4 "$APP" --steps 40 --ckpt-every 5 --ckpt-dir "$CKPT" "${RESTART[@]}" \
  --out "$RUN_DIR/final.digest"
# Commits what a lost forwarder left staged on this node, and exits 1 while anything the
# job closed is not on the store.
"$BUILD/bin/ckptfwd" drain

# Inspect the result without the library:
"$BUILD/bin/ckptfwd" ls "$CKPT/.ckptfwd"
"$BUILD/bin/ckptfwd" verify "$CKPT/.ckptfwd"
