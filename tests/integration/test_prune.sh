#!/usr/bin/env bash
# `ckptfwd prune STORE --keep N` after the job: four checkpoint steps of two ranks, each a
# state that changes every step and a mesh that never does (stored from step 2 on as
# references to step 1's chunks), each step committed in its own container(s).
#  - --dry-run changes nothing (MANIFEST and containers as before);
#  - refused while the job's forwarder runs on the store;
#  - --keep 2: ls --steps lists steps 3 and 4 only, both complete; containers that hold
#    nothing live are gone, but step 1's, whose mesh chunks the kept steps refer to, stays;
#    verify passes; restore --latest and the step-3 files are byte-exact;
#  - a second prune --keep 2 has nothing to do;
#  - verify draws a progress bar on a terminal, not into a file;
#  - names reused in turn (restart.1, .2, .1 again): prune refuses, the order is in doubt;
#  - a prune of a moved store, moved again: what it unlinked stays unlinked.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
# Whole 256 KiB chunks, so the mesh's chunks are found equal from one step to the next.
export CKPTFWD_CHUNK=262144

for r in 0 1; do head -c 1048576 /dev/urandom >"$T/mesh.$r"; done
for s in 1 2 3 4; do
  for r in 0 1; do
    mkdir -p "$DIRECT/step_$s" "$CAP/step_$s"
    head -c 524288 /dev/urandom >"$DIRECT/step_$s/state.$r"
    cp "$T/mesh.$r" "$DIRECT/step_$s/mesh.$r"
    PMI_RANK=$r with_lib cp "$DIRECT/step_$s/state.$r" "$DIRECT/step_$s/mesh.$r" "$CAP/step_$s/" ||
      fail "writing step $s rank $r under the library failed"
  done
  drain
done
"$CLI" ls --steps --json "$STORE" >"$T/before.json" || fail "ls --steps failed"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
steps = [(c["step"], c["files"], c["ranks"], c["complete"]) for c in d["checkpoints"]]
assert steps == [(str(s), 4, 2, True) for s in (1, 2, 3, 4)], steps' "$T/before.json" ||
  fail "ls --steps before the prune: $(cat "$T/before.json")"
[[ $(count_containers "$STORE") -ge 4 ]] || fail "expected a container per step, the store has $(count_containers "$STORE")"

# While the job's forwarder runs (this process keeps it busy), prune is refused.
with_lib sh -c 'cp "$1" "$2" && env -u LD_PRELOAD "$3" prune "$4" --keep 2 >"$5" 2>&1; echo $? >"$5.rc"' \
  sh "$T/mesh.0" "$CAP/extra.bin" "$CLI" "$STORE" "$T/busy.out"
if [[ -d $(ls -d "$STORE"/.group-* 2>/dev/null | head -1) ]]; then
  [[ $(cat "$T/busy.out.rc") == 1 ]] && grep -q "is running on it" "$T/busy.out" ||
    fail "prune was not refused while the forwarder ran: rc $(cat "$T/busy.out.rc"): $(cat "$T/busy.out")"
  ok "prune refused while the job's forwarder runs"
fi
drain
for pid in $(session_forwarders); do kill -TERM "$pid" 2>/dev/null; done
wait_for '[[ -z "$(session_forwarders)" ]]' 10 || fail "the forwarder did not exit"

sum_before=$(sha256sum "$STORE/MANIFEST" | cut -d' ' -f1)
containers_before=$(count_containers "$STORE")
"$CLI" prune "$STORE" --keep 2 --dry-run >"$T/dry.out" 2>&1 || fail "prune --dry-run failed: $(cat "$T/dry.out")"
grep -q "would delete 2 checkpoints (8 files" "$T/dry.out" || fail "prune --dry-run says: $(cat "$T/dry.out")"
[[ $(sha256sum "$STORE/MANIFEST" | cut -d' ' -f1) == "$sum_before" && $(count_containers "$STORE") -eq $containers_before ]] ||
  fail "prune --dry-run changed the store"
ok "prune --dry-run: $(head -1 "$T/dry.out")"

step1=$(grep -o -E $'^(commit|create)\t[^\t]*' "$STORE/MANIFEST" | cut -f2 | head -1)
"$CLI" prune "$STORE" --keep 2 >"$T/prune.out" 2>&1 || fail "prune failed: $(cat "$T/prune.out")"
cat "$T/prune.out"
"$CLI" ls --steps --json "$STORE" >"$T/after.json" || fail "ls --steps after the prune failed"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
steps = [(c["step"], c["files"], c["complete"]) for c in d["checkpoints"]]
assert steps == [("-", 1, True), ("3", 4, True), ("4", 4, True)], steps' "$T/after.json" ||
  fail "ls --steps after the prune: $(cat "$T/after.json")"
containers_after=$(count_containers "$STORE")
[[ $containers_after -lt $containers_before ]] || fail "no container was deleted ($containers_after)"
[[ -e $STORE/$step1 ]] || fail "step 1's container $step1, whose mesh chunks steps 3 and 4 refer to, was deleted"
"$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "verify after the prune: $(cat "$T/verify.out")"
"$CLI" restore "$STORE" --latest --to "$T/latest" >/dev/null 2>&1 || fail "restore --latest after the prune failed"
"$CLI" restore "$STORE" --step 3 --to "$T/three" >/dev/null 2>&1 || fail "restore --step 3 after the prune failed"
for r in 0 1; do
  for f in state mesh; do
    assert_same_bytes "$DIRECT/step_4/$f.$r" "$T/latest/step_4/$f.$r" "step 4 $f.$r"
    assert_same_bytes "$DIRECT/step_3/$f.$r" "$T/three/step_3/$f.$r" "step 3 $f.$r"
  done
done
ok "prune --keep 2: steps 3 and 4 stay and restore exactly, $containers_before -> $containers_after containers, step 1's kept for its referenced chunks, verify passes"

"$CLI" prune "$STORE" --keep 2 >"$T/again.out" 2>&1 || fail "a second prune failed: $(cat "$T/again.out")"
grep -q "nothing to prune" "$T/again.out" || fail "a second prune did something: $(cat "$T/again.out")"
rc=0
"$CLI" prune "$STORE" --keep 0 >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "prune --keep 0 is not a usage error (exit $rc)"
ok "a second prune has nothing to do; --keep 0 is a usage error"

# verify and restore show a progress bar on a terminal (script(1) gives them one), and
# none when stderr is not one.
if command -v script >/dev/null; then
  script -qec "$CLI verify $STORE" /dev/null >"$T/tty.out" 2>&1 || fail "verify on a terminal failed: $(cat "$T/tty.out")"
  grep -q "verifying \[#*" "$T/tty.out" || fail "verify shows no progress on a terminal: $(cat "$T/tty.out")"
  "$CLI" verify "$STORE" >"$T/notty.out" 2>&1
  grep -q "verifying" "$T/notty.out" && fail "verify draws progress into a file: $(cat "$T/notty.out")"
  ok "verify shows progress on a terminal only"
fi

# Names reused in turn (restart.1, restart.2, then restart.1 again: the newest): the
# numbers do not tell the age, and prune deletes nothing.
CAPTURE="$T/poly/*"
mkdir -p "$T/poly"
for n in 1 2 1; do
  with_lib cp "$T/mesh.0" "$T/poly/restart.$n" || fail "writing restart.$n failed"
  drain >/dev/null
  sleep 1.2
done
for pid in $(session_forwarders); do kill -TERM "$pid" 2>/dev/null; done
wait_for '[[ -z "$(session_forwarders)" ]]' 10 || fail "the forwarder did not exit"
rc=0
"$CLI" prune "$T/poly/.ckptfwd" --keep 1 >"$T/poly.out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] && grep -q "not pruning .*may not tell its age" "$T/poly.out" ||
  fail "prune of names reused in turn was not refused (exit $rc): $(cat "$T/poly.out")"
[[ $("$CLI" ls "$T/poly/.ckptfwd" 2>/dev/null | grep -c "/restart\.") -eq 2 ]] || fail "prune deleted a file of names reused in turn"
ok "names reused in turn: prune refuses, naming the doubt"

# A prune of a moved store, then another move: its records still name the files it
# unlinked (the store's place is recorded first), so nothing comes back.
mkdir -p "$T/m1" "$T/m2"
mv "$CAP" "$T/m1/ckpt"
"$CLI" prune "$T/m1/ckpt/.ckptfwd" --keep 1 >"$T/moved-prune.out" 2>&1 || fail "prune of a moved store failed: $(cat "$T/moved-prune.out")"
mv "$T/m1/ckpt" "$T/m2/ckpt"
"$CLI" ls --steps --json "$T/m2/ckpt/.ckptfwd" >"$T/m2.json" 2>/dev/null || fail "ls --steps after prune and move failed"
/usr/bin/python3 -c '
import json, sys
steps = [c["step"] for c in json.load(open(sys.argv[1]))["checkpoints"]]
assert steps == ["-", "4"], steps' "$T/m2.json" || fail "after a prune of a moved store and another move: $(cat "$T/m2.json")"
"$CLI" verify "$T/m2/ckpt/.ckptfwd" >"$T/m2-verify.out" 2>&1 || fail "verify after prune and move: $(cat "$T/m2-verify.out")"
ok "prune of a moved store, moved again: step 4 alone, verify passes"
