#!/usr/bin/env bash
# A run directory moved with its store keeps its checkpoints (store/manifest/store_homes.h),
# and one whose former place cannot be told fails loudly with the fix named. stencil3d
# (4 MPICH ranks, checkpoints every 5 steps) restarts the way real codes do: it looks for
# the newest complete ckpt_<step>_r<rank>.bin with readdir, through the library.
#  1. A job writes steps 5..20 under run/ckpt; the run directory is copied with cp -a to
#     another parent and the original removed. The restart in the copy finds step 20, and
#     its final state equals an uninterrupted run's; it writes steps 25, 30 into the copy.
#  2. The copy is moved again (records under both places now): ls --steps lists 5..30 all
#     complete with 30 marked latest, a restart finds step 30, restore --latest gives the
#     uninterrupted run's step-30 files byte for byte.
#  3. A store of an earlier version (no HOMES file) moved: its former place is inferred.
#  4. The checkpoint directory itself renamed (run/ckpt -> run/ckpt_b): nothing tells the
#     former place; the restart's stderr names `ckptfwd relocate` and stencil3d finds no
#     checkpoint (exits non-zero); after `ckptfwd relocate` the restart finds step 20.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
APP=$BUILD/bin/stencil3d
[[ -x $APP ]] || skip "no $APP"
BASE_JOB=$CKPTFWD_JOB_ID

# job N CKPT STEPS [--restart]: stencil3d under the library as job N, its checkpoints in
# CKPT (captured), its final digest in CKPT/../final.digest; output in $T/job-N.out. Each
# job has its own forwarder (a restart is a new job), stopped before the next.
job() {
  local n=$1 ckpt=$2 steps=$3
  shift 3
  export CKPTFWD_JOB_ID=$BASE_JOB-$n
  mkdir -p "$ckpt"
  timeout 180 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$ckpt/*" \
    mpiexec.mpich -n 4 "$APP" --size 24 20 16 --steps "$steps" --ckpt-every 5 \
    --ckpt-dir "$ckpt" --out "$ckpt/../final.digest" "$@" >"$T/job-$n.out" 2>&1
  local rc=$?
  timeout 60 "$CLI" drain >/dev/null 2>&1
  local pid
  for pid in $(session_forwarders); do kill -TERM "$pid" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do [[ -z "$(session_forwarders)" ]] && break; sleep 0.1; done
  return $rc
}

# The oracle: an uninterrupted run to step 30 without the library.
timeout 180 mpiexec.mpich -n 4 "$APP" --size 24 20 16 --steps 30 --ckpt-every 5 \
  --ckpt-dir "$T/direct" --out "$T/direct.digest" >"$T/direct.out" 2>&1 ||
  fail "stencil3d without the library failed: $(tail -5 "$T/direct.out")"

# 1. Steps 5..20, then copied elsewhere and the original removed.
job 1 "$T/a/run/ckpt" 20 || fail "job 1 failed: $(tail -5 "$T/job-1.out")"
[[ -s $T/a/run/ckpt/.ckptfwd/HOMES ]] || fail "a new store has no HOMES file"
mkdir -p "$T/b"
cp -a "$T/a/run" "$T/b/"
rm -rf "$T/a"
job 2 "$T/b/run/ckpt" 30 --restart || fail "the restart in the copied run directory failed: $(tail -5 "$T/job-2.out")"
grep -q "restarted from step 20" "$T/job-2.out" ||
  fail "the restart in the copied run directory did not find step 20: $(grep stencil3d "$T/job-2.out" | head -3)"
cmp -s "$T/direct.digest" "$T/b/run/final.digest" ||
  fail "the restarted run's final state differs from the uninterrupted run's"
ok "copied run directory: restart from step 20, final state equal to an uninterrupted run"

# 2. Moved again: records under /a (mapped) and /b now, both read below /c.
mkdir -p "$T/c"
mv "$T/b/run" "$T/c/run"
STORE=$T/c/run/ckpt/.ckptfwd
"$CLI" ls --steps --json "$STORE" >"$T/steps.json" 2>"$T/steps.err" ||
  fail "ls --steps of the twice-moved store failed: $(cat "$T/steps.err")"
/usr/bin/python3 - "$T/steps.json" "$T/c/run/ckpt" <<'PY' || fail "ls --steps of the twice-moved store (above)"
import json, sys
doc, cap = json.load(open(sys.argv[1])), sys.argv[2]
cps = doc["checkpoints"]
steps = [c["step"] for c in cps]
assert steps == ["5", "10", "15", "20", "25", "30"], steps
assert all(c["complete"] and c["files"] == 4 and c["ranks"] == 4 for c in cps), cps
assert doc["latest_complete"] == "30" and [c["latest"] for c in cps].count(True) == 1
assert all(p.startswith(cap + "/") for c in cps for p in c["paths"]), "paths not below " + cap
print("steps", steps, "latest", doc["latest_complete"])
PY
grep -q "read below $T/c/run/ckpt" "$T/steps.err" || fail "ls does not note the move: $(cat "$T/steps.err")"
job 3 "$T/c/run/ckpt" 30 --restart || fail "the restart after the second move failed: $(tail -5 "$T/job-3.out")"
grep -q "restarted from step 30" "$T/job-3.out" ||
  fail "after the second move the restart did not find step 30: $(grep stencil3d "$T/job-3.out" | head -3)"
"$CLI" restore "$STORE" --latest --to "$T/latest" >"$T/restore.out" 2>&1 ||
  fail "restore --latest failed: $(cat "$T/restore.out")"
for r in 0 1 2 3; do
  assert_same_bytes "$T/direct/ckpt_30_r$r.bin" "$T/latest/ckpt_30_r$r.bin" "restore --latest rank $r"
done
[[ $(find "$T/latest" -type f | wc -l) -eq 4 ]] || fail "restore --latest gave $(find "$T/latest" -type f | wc -l) files, not 4"
ok "moved twice: ls --steps 5..30 complete, restart from 30, restore --latest equal to the direct step 30"

# 3. A store without HOMES (an earlier version's) moved: inferred.
job 4 "$T/d/run/ckpt" 10 || fail "job 4 failed: $(tail -5 "$T/job-4.out")"
rm "$T/d/run/ckpt/.ckptfwd/HOMES"
mkdir -p "$T/e" && mv "$T/d/run" "$T/e/run" && rmdir "$T/d"
job 5 "$T/e/run/ckpt" 15 --restart || fail "the restart of a moved store without HOMES failed: $(tail -5 "$T/job-5.out")"
grep -q "restarted from step 10" "$T/job-5.out" ||
  fail "a moved store without HOMES: restart did not find step 10: $(grep stencil3d "$T/job-5.out" | head -3)"
grep -qx "$T/d/run/ckpt" "$T/e/run/ckpt/.ckptfwd/HOMES" ||
  fail "the forwarder did not record the inferred former place: $(cat "$T/e/run/ckpt/.ckptfwd/HOMES")"
ok "a moved store without HOMES: former place inferred and recorded, restart from step 10"

# 4. The checkpoint directory renamed: no former place can be told; said, with the fix.
job 6 "$T/f/run/ckpt" 20 || fail "job 6 failed: $(tail -5 "$T/job-6.out")"
rm "$T/f/run/ckpt/.ckptfwd/HOMES"
mv "$T/f/run/ckpt" "$T/f/run/ckpt_b"
if job 7 "$T/f/run/ckpt_b" 25 --restart; then
  fail "stencil3d restarted although its checkpoints cannot be found: $(grep stencil3d "$T/job-7.out" | head -3)"
fi
grep -q "ckptfwd relocate $T/f/run/ckpt_b/.ckptfwd" "$T/job-7.out" ||
  fail "the application's stderr does not name ckptfwd relocate: $(grep -v '^$' "$T/job-7.out" | head -5)"
"$CLI" ls "$T/f/run/ckpt_b/.ckptfwd" >/dev/null 2>"$T/ls-away.err"
grep -q "ckptfwd relocate" "$T/ls-away.err" || fail "ckptfwd ls does not name the fix: $(cat "$T/ls-away.err")"
"$CLI" relocate "$T/f/run/ckpt_b/.ckptfwd" "$T/f/run/ckpt" >"$T/relocate.out" 2>&1 ||
  fail "ckptfwd relocate failed: $(cat "$T/relocate.out")"
job 8 "$T/f/run/ckpt_b" 25 --restart || fail "the restart after relocate failed: $(tail -5 "$T/job-8.out")"
grep -q "restarted from step 20" "$T/job-8.out" ||
  fail "after relocate the restart did not find step 20: $(grep stencil3d "$T/job-8.out" | head -3)"
ok "a renamed checkpoint directory: the restart names ckptfwd relocate; after it, restart from step 20"
