#!/usr/bin/env bash
# examples/job_slurm.sh under a real Slurm: slurmctld and two slurmd (nodes n1 and n2, both
# on this host, slurm_cluster.sh) with munge, all in this test's directory. Checks:
#   - a reference run of stencil3d without the library (srun, 8 ranks on the 2 nodes);
#   - job 1: `sbatch job_slurm.sh` runs the first half of the steps under ckptfwd; one
#     forwarder per Slurm node (SLURMD_NODENAME), so the job's stats file holds forwarder
#     records of two nodes that both committed files, and the store holds containers of both;
#     no checkpoint landed on disk directly;
#   - job 2: the same script submitted again restarts from the newest checkpoint through the
#     library (its forwarders restored files) and ends with the reference run's digest;
#   - `ckptfwd verify` is clean (inside the jobs and here), and every checkpoint
#     `ckptfwd restore` gives back is byte-identical to the reference run's.
#
# Skips (exit 77) when Slurm cannot run here, saying why. With CI=true a skip is a failure,
# except when not root: `make deps` installs slurm-wlm and munge, so on the CI machine a
# missing command or a cluster that does not start is a fault to fix, not to hide. Root is
# the one thing a test cannot arrange: slurmd starts job tasks as the submitting user
# (setuid), which needs root.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_cluster.sh"
ckf_init "$@"

cannot_run() {
  if [[ "${CI:-}" == true && "${2:-}" != outside ]]; then
    fail "Slurm cannot run here, and CI=true does not allow a skip: $1"
  fi
  skip "$1"
}

# The cluster goes first (its jobs may still use $T), then lib.sh's cleanup, which sees
# this test's exit status (77: skipped) through $?.
finish() {
  local rc=$?
  set +e
  slurm_stop
  (exit $rc)
  ckf_cleanup
}
trap finish EXIT

[[ $(id -u) -eq 0 ]] || cannot_run "needs root (slurmd starts job tasks as their user)" outside
missing=$(slurm_missing)
[[ -z "$missing" ]] || cannot_run "not installed: $missing (make deps installs slurm-wlm and munge)"
need_cmd mpiexec.mpich
APP=$BUILD/bin/stencil3d
[[ -x "$APP" ]] || fail "$APP is missing: build first (make)"
JOB_SCRIPT=$CKF_REPO/examples/job_slurm.sh

started=$SECONDS
slurm_start "$T/slurm" n1 n2 2>"$T/slurm-start.err" ||
  cannot_run "the Slurm test cluster did not start: $(cat "$T/slurm-start.err")"
ok "slurmctld + slurmd n1, n2 up in $((SECONDS - started))s ($(sinfo -h -N -o '%N:%T' | tr '\n' ' '))"

STEPS=20
EVERY=5
HALF=10
# What the job script writes under its submit directory: run/{ckpt,final.digest,...}
SUBMIT=$T/submit
RUN_DIR=$SUBMIT/run
CKPT=$RUN_DIR/ckpt
STORE=$CKPT/.ckptfwd
mkdir -p "$SUBMIT"

# --- reference: the same 8 ranks on the same 2 nodes, without the library -----------------
timeout 120 srun -N 2 -n 8 --ntasks-per-node=4 "$APP" --steps $STEPS --ckpt-every $EVERY \
  --ckpt-dir "$T/ref_ckpt" --out "$T/reference.digest" >"$T/reference.out" 2>&1 ||
  fail "reference srun of stencil3d failed (srun + MPICH over PMI2): $(tail -5 "$T/reference.out")"
ok "reference run (srun, 8 ranks, 2 nodes, no library): $(cat "$T/reference.digest")"

# submit STEPS: sbatch the example from $SUBMIT, wait for it; prints the job id. The jobs
# find their forwarders by Slurm's job id (not this test's CKPTFWD_JOB_ID) and by
# SLURMD_NODENAME; the library's staging, log and idle exit come from this test's environment.
submit() {
  local out id state
  local args="--steps $1 --ckpt-every $EVERY --ckpt-dir $CKPT --out $RUN_DIR/final.digest"
  out=$(cd "$SUBMIT" && env -u CKPTFWD_JOB_ID -u CKPTFWD_STATS_FILE APP="$APP" ARGS="$args" RESTART_ARGS="$args --restart" \
    sbatch --parsable --export=ALL,CKPTFWD_HOME="$BUILD" "$JOB_SCRIPT" 2>&1) ||
    fail "sbatch $JOB_SCRIPT failed: $out"
  id=${out%%;*}
  [[ "$id" =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: $out"
  state=$(slurm_wait_job "$id" 180)
  [[ "$state" == COMPLETED ]] ||
    fail "job $id ended $state: $(tail -n 15 "$SUBMIT/ckptfwd-job-$id.out" 2>/dev/null) $(slurm_logs | tail -n 20)"
  echo "$id"
}

# Waits until every forwarder of job ID has left (idle exit) and written its record.
wait_forwarders_of() {
  local stats=$RUN_DIR/ckptfwd-stats-$1.jsonl
  wait_for "[[ -z \"\$(slurm_leftovers)\" ]]" 30 || fail "forwarders of job $1 did not exit: $(slurm_leftovers)"
  [[ -s "$stats" ]] || fail "job $1 left no stats file $stats"
}

# per_node STATS KEY: "node sum" lines over the forwarder records of a stats file.
per_node() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
path, key = sys.argv[1:]
sums = {}
for n, line in enumerate(open(path), 1):
    if not line.strip():
        continue
    try:
        rec = json.loads(line)
    except ValueError as e:
        sys.exit(f"{path}:{n}: not JSON ({e}): {line[:200]}")
    if rec.get("source") == "forwarder":
        node = rec.get("node", "(no node)")
        sums[node] = sums.get(node, 0) + rec.get(key, 0)
for node in sorted(sums):
    print(node, sums[node])
EOF
}

# --- job 1: the first half, under ckptfwd ----------------------------------------------------
job1=$(submit $HALF)
out1=$SUBMIT/ckptfwd-job-$job1.out
grep -q "stencil3d: steps=0..$HALF " "$out1" || fail "job $job1 did not run steps 0..$HALF: $(tail -5 "$out1")"
# The job script's per-node drain ran on both nodes (and exited 0: the script has set -e).
[[ $(grep -cE "^(drained|nothing to drain)" "$out1") -eq 2 ]] ||
  fail "job $job1: the per-node ckptfwd drain did not report from both nodes: $(grep -i drain "$out1")"
wait_forwarders_of "$job1"
n_regular=$(find "$CKPT" -maxdepth 1 -type f -name 'ckpt_*' | wc -l)
[[ $n_regular -eq 0 ]] || fail "$n_regular checkpoint files of job $job1 landed on disk directly in $CKPT"

# Two forwarders, one per Slurm node, each committed files. A node's identity is its
# SLURMD_NODENAME, with this host's first label since n1/n2 are not this host's name.
host=$(hostname -s)
per_node "$RUN_DIR/ckptfwd-stats-$job1.jsonl" files_committed >"$T/job1.nodes" || fail "stats: $(cat "$T/job1.nodes")"
echo "job $job1 files committed per node: $(tr '\n' ' ' <"$T/job1.nodes")"
[[ $(wc -l <"$T/job1.nodes") -eq 2 ]] ||
  fail "job $job1: forwarder records of $(wc -l <"$T/job1.nodes") nodes, expected n1.$host and n2.$host: $(cat "$RUN_DIR/ckptfwd-stats-$job1.jsonl")"
for node in n1.$host n2.$host; do
  committed=$(awk -v n="$node" '$1 == n {print $2}' "$T/job1.nodes")
  [[ "${committed:-0}" -gt 0 ]] || fail "job $job1: no forwarder of node $node committed a file: $(cat "$T/job1.nodes")"
  n_containers=$(find "$STORE" -maxdepth 1 -name "c-$node-*.ckc" | wc -l)
  [[ $n_containers -gt 0 ]] || fail "no container of node $node in $STORE: $(find "$STORE" -maxdepth 1 -name '*.ckc' -printf '%f ' | head -c 600)"
done
ok "job $job1: one forwarder per Slurm node (n1.$host, n2.$host), both committed files and wrote containers"

# --- job 2: resubmitted, restarts through the library ---------------------------------------
job2=$(submit $STEPS)
out2=$SUBMIT/ckptfwd-job-$job2.out
grep -q "job_slurm: restarting from checkpoint $HALF " "$out2" ||
  fail "job $job2: the script did not find checkpoint $HALF with ckptfwd ls --latest: $(grep job_slurm "$out2")"
grep -q "stencil3d: restarted from step $HALF in $CKPT" "$out2" ||
  fail "job $job2 did not restart from step $HALF: $(grep stencil3d "$out2" | head -5)"
wait_forwarders_of "$job2"
per_node "$RUN_DIR/ckptfwd-stats-$job2.jsonl" restores >"$T/job2.restores"
restores=$(awk '{s += $2} END {print s + 0}' "$T/job2.restores")
[[ $restores -gt 0 ]] || fail "job $job2: no forwarder restored a file (restart did not read through the library): $(cat "$T/job2.restores")"
assert_same_bytes "$T/reference.digest" "$RUN_DIR/final.digest" "digest of the restarted job $job2"
ok "job $job2 restarted from step $HALF through the library ($restores files restored) and ends with the reference digest $(cat "$RUN_DIR/final.digest")"

# --- the store ---------------------------------------------------------------------------------
# The jobs' output (the application, srun, the jobs' own `ckptfwd verify`) and the library's
# and forwarders' log (CKPTFWD_LOG, from this test's environment) report no error.
for f in "$out1" "$out2" "$CKPTFWD_LOG"; do
  [[ ! -e "$f" ]] || ! grep -qiE "error|corrupt|not committed" "$f" ||
    fail "$f reports errors: $(grep -iE -m5 "error|corrupt|not committed" "$f")"
done
timeout 120 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify $STORE: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$T/restored"
want=$(find "$T/ref_ckpt" -type f -name 'ckpt_*_r*.bin' | wc -l)
same=0
while IFS= read -r f; do
  assert_same_bytes "$T/ref_ckpt/$(basename "$f")" "$f" "restored $(basename "$f")"
  same=$((same + 1))
done < <(find "$T/restored" -type f -name 'ckpt_*_r*.bin')
[[ $same -eq $want && $want -gt 0 ]] || fail "restored $same checkpoint files, the reference run wrote $want"
ok "ckptfwd verify clean; $same restored checkpoints identical to the reference run's"
echo "test_slurm: ${SECONDS}s in all, $((SECONDS - started))s from the cluster's start"
