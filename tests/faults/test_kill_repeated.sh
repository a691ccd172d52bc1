#!/usr/bin/env bash
# Repeated forwarder loss: 4 MPI ranks each write 6 checkpoint steps (one file per step,
# CKPTFWD_KILL_SIZE each, 300 ms apart) while the node's forwarder is killed 1-3 times at
# random moments, the exit wait included. What must hold, whatever the kills hit: either
# every checkpoint file a restart reads through the library is exactly what a run without
# the library wrote, or the job said it is not: mpiexec exits non-zero (a rank whose files
# are not committed exits 75) or `ckptfwd drain` does. A run where mpiexec and drain both
# exit 0 and a restart reads other bytes, or none, fails the test.
# The kill times come from CKPTFWD_KILL_SEED (printed; set it to replay a run).
# tools/faults/loop_kill_points.sh runs it many times ("repeated").
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
need_cmd mpiexec.mpich
SIZE=${CKPTFWD_KILL_SIZE:-8M}
RANKS=4 STEPS=6
SEED=${CKPTFWD_KILL_SEED:-$(( $(date +%s%N) % 1000000 ))}
RANDOM=$SEED
echo "kill seed $SEED (CKPTFWD_KILL_SEED=$SEED replays it)"
export CKPTFWD_IDLE_EXIT=5 CKPTFWD_EXIT_RETRY_S=20

for ((r = 0; r < RANKS; r++)); do
  "$FW" "$DIRECT/r$r" "$SIZE" --files "$STEPS" --seed $((r + 1)) >/dev/null || fail "direct run failed"
done

# Each rank: one process writing its 6 steps (the library's exit wait runs once, at its end).
cat >"$T/rank.sh" <<SH
#!/usr/bin/env bash
exec "$FW" "$CAP/r\$PMI_RANK" "$SIZE" --files $STEPS --seed \$((PMI_RANK + 1)) --between 300
SH
chmod +x "$T/rank.sh"
timeout 240 mpiexec.mpich -n $RANKS env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
  "$T/rank.sh" >"$T/mpi.out" 2>&1 &
job=$!

# kill_now: SIGKILL the session's forwarders, if one runs, counting it.
done_kills=0
start=$SECONDS
kill_now() {
  local pids
  mapfile -t pids < <(session_forwarders)
  ((${#pids[@]} > 0)) || return 0
  kill -KILL "${pids[@]}" 2>/dev/null && done_kills=$((done_kills + 1))
  echo "kill $done_kills of $kills at $((SECONDS - start)) s ($1): forwarder ${pids[*]}"
}
rand_sleep() { sleep "$(($1 * (RANDOM % 100) / 100)).$((RANDOM % 10))"; }
# The first kill while the ranks write their steps; the others once a rank has written its
# last step, where its exit wait is: each as soon as a forwarder (the one the exit wait
# starts again) is up, after 0-0.3 s. A second loss there is what the exit wait must outlast.
kills=$((1 + RANDOM % 3))
wait_for '[[ -n "$(session_forwarders)" ]] || ! kill -0 $job' 60 || true
rand_sleep 2
kill_now "steps"
if ((kills >= 2)); then
  wait_for "grep -q '^done' '$T/mpi.out' || ! kill -0 $job" 120 || true
fi
while ((done_kills < kills)) && kill -0 "$job" 2>/dev/null; do
  wait_for '[[ -n "$(session_forwarders)" ]] || ! kill -0 $job' 30 || break
  sleep "0.$((RANDOM % 4))"
  kill_now "exit wait"
done
rc=0
wait "$job" || rc=$?
echo "mpiexec exited $rc after $done_kills kills"

# The restart: a new job reads every file through the library, before any drain.
bad_before=()
check_restart() {
  local job_id=$1 r k
  bad=()
  for ((r = 0; r < RANKS; r++)); do
    for ((k = 0; k < STEPS; k++)); do
      CKPTFWD_JOB_ID=$job_id with_lib cmp -s "$CAP/r$r.$k" "$DIRECT/r$r.$k" 2>/dev/null ||
        bad+=("r$r.$k")
    done
  done
}
check_restart "restart1-$CKPTFWD_JOB_ID"
bad_before=("${bad[@]}")
drc=0
CKPTFWD_CAPTURE="$CAPTURE" timeout 120 "$CLI" drain >"$T/drain.out" 2>&1 || drc=$?
echo "ckptfwd drain exited $drc: $(tail -1 "$T/drain.out")"
if [[ $rc -eq 0 && $drc -eq 0 && ${#bad_before[@]} -gt 0 ]]; then
  grep -h "ERROR" "$CKPTFWD_LOG" 2>/dev/null | head -5
  fail "mpiexec and drain exited 0 but a restart read wrong or no bytes of ${bad_before[*]}"
fi
if [[ ${#bad_before[@]} -gt 0 ]]; then
  ok "not all committed at exit (${bad_before[*]}), and the job said so (mpiexec $rc, drain $drc)"
else
  ok "every checkpoint file restored exactly right after the job ($done_kills kills, mpiexec $rc)"
fi
# Whatever was reported, once drain exited 0 every file must be exact.
if [[ $drc -eq 0 ]]; then
  check_restart "restart2-$CKPTFWD_JOB_ID"
  [[ ${#bad[@]} -eq 0 ]] || fail "ckptfwd drain exited 0 but a restart read wrong or no bytes of ${bad[*]}"
  ok "after drain: all $((RANKS * STEPS)) files exact"
fi
