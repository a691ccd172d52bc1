#!/usr/bin/env bash
# Two runs at the same time outside any batch system, each with its own capture globs and
# no job id set (docs/settings.md, CKPTFWD_JOB_ID): each gets a forwarder of its own
# (session local-<digest of its globs>) and so its stores where its globs say. Run 1
# captures $T/run1/ckpt/* and holds its processes open after writing; run 2, meanwhile,
# captures $T/run2/ckpt/step_*/* (one store, $T/run2/ckpt/.ckptfwd, for every step): a
# forwarder shared with run 1 would not know run 2's globs and put a store in each step
# directory. Then: two forwarders were up at once; each store lists only its run's files;
# restore gives both runs' bytes back; `ckptfwd drain` with a run's CKPTFWD_CAPTURE finds
# that run's forwarder, and `ckptfwd stats` without globs names the local jobs it found.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
need_cmd mpiexec.mpich
ckf_no_job_id
# (both forwarders must outlive the checks made while both runs are up; stopped above)
export CKPTFWD_IDLE_EXIT=120

R1=$T/run1/ckpt R2=$T/run2/ckpt
mkdir -p "$R1" "$R2/step_1" "$R2/step_2" "$DIRECT/1" "$DIRECT/2/step_1" "$DIRECT/2/step_2"
for r in 0 1; do
  "$WRITER" write "$DIRECT/1" --rank $r >/dev/null
  for s in 1 2; do "$WRITER" big "$DIRECT/2/step_$s/r.$r" 300K --rank $((r + 2 * s)); done
done

timeout 150 mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$R1/*" \
  sh -c 'exec "$0" write "$1" --rank "$PMI_RANK" --hold "$2"' "$WRITER" "$R1" "$T/go" \
  >"$T/run1.out" 2>&1 &
run1=$!
# Run 1 has written (its fsyncs committed every file) and holds on.
for ((i = 0; i < 300; i++)); do
  n=$(CKPTFWD_CAPTURE="$R1/*" "$CLI" ls "$R1/.ckptfwd" 2>/dev/null | grep -c "$R1/") || true
  [[ $n -ge 16 ]] && break
  kill -0 $run1 2>/dev/null || fail "run 1 ended early: $(cat "$T/run1.out")"
  sleep 0.2
done
[[ $n -ge 16 ]] || fail "run 1's 16 files did not reach its store in 60 s ($n): $(cat "$T/run1.out")"

for s in 1 2; do
  timeout 120 mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$R2/step_*/*" \
    sh -c 'exec "$0" big "$1.$PMI_RANK" 300K --rank $((PMI_RANK + 2 * $2))' "$WRITER" "$R2/step_$s/r" $s \
    >"$T/run2.$s.out" 2>&1 || fail "run 2 step $s exited $?: $(cat "$T/run2.$s.out")"
done
sessions=$(find "$CKPTFWD_STAGE_DIR" -maxdepth 1 -type d -name "ckptfwd-$(id -u)-*" -printf '%f\n' | sort)
n_sessions=$(echo "$sessions" | grep -c .) || true
[[ $n_sessions -eq 2 ]] || fail "$n_sessions session directories, not one per run: $sessions"
echo "$sessions" | grep -qv -- "-local-[0-9a-f]\{8\}-" && fail "a session is not named local-<digest>: $sessions"
env -u CKPTFWD_CAPTURE "$CLI" stats >"$T/stats.out" 2>&1 && fail "ckptfwd stats without globs found a forwarder"
for s in $sessions; do
  job=$(echo "$s" | grep -o 'local-[0-9a-f]*')
  grep -q "$job" "$T/stats.out" || fail "ckptfwd stats without globs does not name $job: $(cat "$T/stats.out")"
done
ok "two forwarders at once: $(echo $sessions)"

touch "$T/go"
wait $run1 || fail "run 1 exited $?: $(cat "$T/run1.out")"
CKPTFWD_CAPTURE="$R1/*" timeout 120 "$CLI" drain || fail "drain of run 1 (by its globs) failed"
CKPTFWD_CAPTURE="$R2/step_*/*" timeout 120 "$CLI" drain || fail "drain of run 2 (by its globs) failed"

stray=$(find "$R2" -mindepth 2 -name .ckptfwd)
[[ -z $stray ]] || fail "run 2 has stores in its step directories: $stray"
"$CLI" ls "$R1/.ckptfwd" >"$T/ls1" || fail "ls of run 1's store failed"
"$CLI" ls "$R2/.ckptfwd" >"$T/ls2" || fail "ls of run 2's store failed: $(cat "$T/ls2")"
grep -q "$T/run2" "$T/ls1" && fail "run 1's store lists run 2's files: $(cat "$T/ls1")"
grep -q "$T/run1" "$T/ls2" && fail "run 2's store lists run 1's files: $(cat "$T/ls2")"
restore_store "$R1/.ckptfwd" "$OUT/1"
assert_restored_tree "$DIRECT/1" "$R1" "$OUT/1"
restore_store "$R2/.ckptfwd" "$OUT/2"
for s in 1 2; do
  for r in 0 1; do assert_same_bytes "$DIRECT/2/step_$s/r.$r" "$OUT/2/step_$s/r.$r" "run 2 step $s rank $r"; done
done
ok "each run's store holds its own files only, restored byte-exact; each drained by its globs"

# Within one job id, a run with other globs than its forwarder was started for is served
# (its restart finds its checkpoints) and told so on its stderr, with the fix.
export CKPTFWD_JOB_ID=it-same-$$
R3=$T/run3/ckpt R4=$T/run4/ckpt
mkdir -p "$R3" "$R4"
timeout 150 mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$R3/*" \
  sh -c 'exec "$0" write "$1" --rank "$PMI_RANK" --hold "$2"' "$WRITER" "$R3" "$T/go3" \
  >"$T/run3.out" 2>&1 &
run3=$!
for ((i = 0; i < 300; i++)); do
  compgen -G "$CKPTFWD_STAGE_DIR/ckptfwd-$(id -u)-$CKPTFWD_JOB_ID-*/sock" >/dev/null && break
  sleep 0.2
done
compgen -G "$CKPTFWD_STAGE_DIR/ckptfwd-$(id -u)-$CKPTFWD_JOB_ID-*/sock" >/dev/null ||
  fail "run 3's forwarder did not listen within 60 s: $(cat "$T/run3.out")"
timeout 120 mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$R4/*" \
  sh -c 'exec "$0" write "$1" --rank "$PMI_RANK"' "$WRITER" "$R4" >"$T/run4.out" 2>&1 ||
  fail "run 4 exited $?: $(cat "$T/run4.out")"
touch "$T/go3"
wait $run3 || fail "run 3 exited $?: $(cat "$T/run3.out")"
said=$(grep -c "^ckptfwd: pid [0-9]* captures other globs .* was started for ($R3/\*).*Fix: give each run its own CKPTFWD_JOB_ID" "$T/run4.out") || true
[[ $said -eq 2 ]] || fail "run 4's processes did not each say once that their globs differ ($said): $(cat "$T/run4.out")"
timeout 120 "$CLI" drain || fail "drain of the shared job failed"
restore_store "$R4/.ckptfwd" "$OUT/4"
assert_restored_tree "$DIRECT/1" "$R4" "$OUT/4"
ok "one job id, other globs: served, said once on each process's stderr, restored byte-exact"

# `ckptfwd run --capture G` outside a batch system drains the job its command ran as (named
# after G), not job 0: the file is committed when it returns, though the command's process
# did not wait (CKPTFWD_EXIT_WAIT=0) and the batch window alone would hold it back 5 s.
export CKPTFWD_JOB_ID=
R5=$T/run5/ckpt
mkdir -p "$R5"
"$WRITER" big "$DIRECT/r5.bin" 200K
CKPTFWD_EXIT_WAIT=0 CKPTFWD_BATCH_WINDOW_MS=5000 timeout 120 "$CLI" run --capture "$R5/*" -- \
  "$WRITER" big "$R5/r5.bin" 200K >"$T/run5.out" 2>&1 || fail "ckptfwd run exited $?: $(cat "$T/run5.out")"
"$CLI" ls "$R5/.ckptfwd" 2>&1 | grep -q "$R5/r5.bin" ||
  fail "ckptfwd run returned before the file was committed: $("$CLI" ls "$R5/.ckptfwd" 2>&1 | tail -3)"
restore_store "$R5/.ckptfwd" "$OUT/5"
assert_same_bytes "$DIRECT/r5.bin" "$OUT/5/r5.bin" "ckptfwd run's file"
ok "ckptfwd run --capture without a job id drains its command's job"
