#!/usr/bin/env bash
# examples/job_mpiexec.sh runs applications that are not the demo, as a user would set it
# up (APP, ARGS, RESTART_ARGS, CKPT_DIR; nothing else of the demo):
#  - LAMMPS (Debian's lmp, Open MPI, 4 ranks) writing its own multi-file restarts every 30
#    steps: the script picks libckptfwd.so and Open MPI's launcher, and after the run
#    `ckptfwd ls --steps` shows steps 30 and 60 complete; run again, the script restarts
#    LAMMPS from step 60 (`ckptfwd ls --latest`), read through the library, and the
#    restarted run's final restart files (written outside the capture) equal those of the
#    same two runs without the library, byte for byte;
#  - stencil3d (MPICH): the script picks libckptfwd-mpich.so and mpiexec.mpich.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd lmp mpiexec.openmpi
SCRIPT=$CKF_REPO/examples/job_mpiexec.sh
# The script names each run's job (empty: its default); this test's forwarders are those
# staging in its directory, stopped before it is removed.
export CKPTFWD_JOB_ID=
stop_mine() {
  local pid
  for pid in $(forwarders_with_env "CKPTFWD_STAGE_DIR=$CKPTFWD_STAGE_DIR"); do kill -TERM "$pid" 2>/dev/null; done
  wait_for '[[ -z "$(forwarders_with_env "CKPTFWD_STAGE_DIR=$CKPTFWD_STAGE_DIR")" ]]' 10
}
CKF_CLEANUP_HOOKS+=(stop_mine)

{ cat "$CKF_REPO/tests/integration/data/lammps_lj.in"
} >"$T/run.in"
cat >"$T/restart.in" <<'IN'
read_restart    ${dir}/ckpt.${step}.%
neighbor        0.3 bin
fix             1 all nve
run             30
write_restart   ${out}/final.%
IN

# The oracle: both runs without the library.
mkdir -p "$T/direct" "$T/direct-out"
(cd "$T" && timeout 300 mpiexec.openmpi --oversubscribe -n 4 lmp -log none -in run.in -var dir "$T/direct" >"$T/direct1.log" 2>&1 &&
  timeout 300 mpiexec.openmpi --oversubscribe -n 4 lmp -log none -in restart.in -var dir "$T/direct" -var step 60 \
    -var out "$T/direct-out" >"$T/direct2.log" 2>&1) || fail "LAMMPS without the library failed: $(tail -5 "$T"/direct*.log)"

CKPT=$T/run/ckpt
mkdir -p "$T/out"
job() {
  (cd "$T" && APP=lmp NP=4 MPIEXEC_FLAGS=--oversubscribe CKPTFWD_HOME=$BUILD CKPT_DIR=$CKPT \
    ARGS="-log none -in run.in -var dir $CKPT" \
    RESTART_ARGS="-log none -in restart.in -var dir $CKPT -var step {step} -var out $T/out" \
    timeout 600 bash "$SCRIPT") >"$T/job$1.out" 2>&1
}
job 1 || fail "job_mpiexec.sh with LAMMPS failed: $(tail -15 "$T/job1.out")"
grep -q "(openmpi MPI) under $BUILD/lib/libckptfwd.so, 4 ranks of mpiexec.openmpi" "$T/job1.out" ||
  fail "the script did not pick libckptfwd.so and mpiexec.openmpi for LAMMPS: $(grep job_mpiexec "$T/job1.out")"
ls "$CKPT" | grep -q '^ckpt\.' && fail "LAMMPS's restart files were written directly: $(ls "$CKPT")"
grep -qE '^  30 +5 +4 .* complete$' "$T/job1.out" && grep -qE '^\* 60 +5 +4 .* complete$' "$T/job1.out" ||
  fail "ls --steps in the job's output does not show steps 30 and 60 (4 ranks + base) complete: $(grep -A4 '^series' "$T/job1.out")"
grep -q "^OK: " "$T/job1.out" || fail "verify in the job's output: $(tail -3 "$T/job1.out")"
ok "LAMMPS under job_mpiexec.sh: libckptfwd.so, steps 30 and 60 complete, verify OK"

job 2 || fail "the restart through job_mpiexec.sh failed: $(tail -15 "$T/job2.out")"
grep -q "job_mpiexec: restarting from checkpoint 60" "$T/job2.out" ||
  fail "the script did not restart from checkpoint 60: $(grep job_mpiexec "$T/job2.out")"
n=0
for f in "$T"/direct-out/final.*; do
  name=$(basename "$f")
  [[ -e $T/out/$name ]] || fail "the restarted run wrote no $name"
  assert_same_bytes "$f" "$T/out/$name" "$name of the restarted run"
  n=$((n + 1))
done
[[ $n -ge 5 ]] || fail "the direct restarted run wrote $n final files"
ok "restarted through the script from step 60; its $n final restart files equal the run without the library"

need_cmd mpiexec.mpich
APPM=$BUILD/bin/stencil3d
if [[ -x $APPM ]]; then
  (cd "$T" && APP=$APPM NP=2 CKPTFWD_HOME=$BUILD CKPT_DIR=$T/st/ckpt \
    ARGS="--size 8 8 8 --steps 4 --ckpt-every 2 --ckpt-dir $T/st/ckpt" \
    timeout 300 bash "$SCRIPT") >"$T/st.out" 2>&1 || fail "job_mpiexec.sh with stencil3d failed: $(tail -10 "$T/st.out")"
  grep -q "(mpich MPI) under $BUILD/lib/libckptfwd-mpich.so, 2 ranks of mpiexec.mpich" "$T/st.out" ||
    fail "the script did not pick libckptfwd-mpich.so for an MPICH program: $(grep job_mpiexec "$T/st.out")"
  grep -qE '^\* 4 +2 +2 .* complete$' "$T/st.out" || fail "stencil3d's steps: $(grep -A4 '^series' "$T/st.out")"
  ok "stencil3d (MPICH) under job_mpiexec.sh: libckptfwd-mpich.so, step 4 complete"
fi
