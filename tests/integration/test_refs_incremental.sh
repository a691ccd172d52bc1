#!/usr/bin/env bash
# Reference chunks end to end (docs/internals.md, "Merge schemes and codec chains"): a job writes two
# checkpoint steps of 4 ranks through the library, each rank's file a mesh that never
# changes (1 MiB) and a state that does (256 KiB), under new names each step. The second
# step's container stores the mesh as references to the first one's chunks: it is much
# smaller, the forwarder counts bytes_referenced, `ckptfwd ls --all` shows the references,
# every file of both steps restores byte for byte and `ckptfwd verify` is clean. Then the
# first container is moved away: verify and restore name it.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
# Whole chunks per file: each file's chunks are the same whatever order the batch lays
# the ranks' files out in (they are stored agnostic, concatenated).
export CKPTFWD_CHUNK=262144

for r in 0 1 2 3; do head -c 1048576 /dev/urandom >"$T/mesh.r$r"; done
for n in 1 2; do
  for r in 0 1 2 3; do
    cat "$T/mesh.r$r" <(head -c 262144 /dev/urandom) >"$DIRECT/step$n.rank$r.bin"
  done
  # Each rank writes its file as one process of the job would; the drain waits.
  for r in 0 1 2 3; do
    PMI_RANK=$r CKPTFWD_EXIT_WAIT=0 with_lib cp "$DIRECT/step$n.rank$r.bin" "$CAP/" ||
      fail "step $n rank $r under the library failed"
  done
  drain
done
mapfile -t containers < <(grep -o -E $'^(commit|create)\t[^\t]*' "$STORE/MANIFEST" | cut -f2)
[[ ${#containers[@]} -eq 2 ]] || fail "expected 2 containers (one per step), got ${#containers[@]}: $(ls "$STORE")"
first=$(stat -c %s "$STORE/${containers[0]}")
second=$(stat -c %s "$STORE/${containers[1]}")
echo "step 1 container: $first bytes; step 2 container: $second bytes"
[[ $((second * 3)) -lt $first ]] ||
  fail "the second container ($second bytes) is not much smaller than the first ($first bytes)"
ok "unchanged mesh stored as references: $second bytes against $first"

"$CLI" ls "$STORE" --all >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --all failed: $(tail -3 "$T/ls.txt")"
grep -q "${containers[1]}: .* chunks are references (to ${containers[0]})" "$T/ls.txt" ||
  fail "ls --all does not show the references: $(grep ckc "$T/ls.txt")"
timeout 60 "$CLI" verify "$STORE" >"$T/verify.txt" 2>&1 || fail "verify failed: $(tail -5 "$T/verify.txt")"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
with_lib cat "$CAP/step2.rank3.bin" >"$T/readback" || fail "read-back through the library failed"
assert_same_bytes "$DIRECT/step2.rank3.bin" "$T/readback" "read-back of step2.rank3.bin"
ok "ls --all shows the references, verify clean, both steps restore and read back byte for byte"

wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"
referenced=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder bytes_referenced) || fail "bad stats: $referenced"
[[ $referenced -eq $((4 * 1048576)) ]] || fail "stats count $referenced bytes_referenced, expected $((4 * 1048576))"
ok "bytes_referenced $referenced"

# The referenced container moved away: verify and restore name it.
mv "$STORE/${containers[0]}" "$T/"
if "$CLI" verify "$STORE" >"$T/verify-bad.txt" 2>&1; then fail "verify passed without the referenced container"; fi
grep -q "in ${containers[0]}, which is missing" "$T/verify-bad.txt" ||
  fail "verify does not name the missing referenced container: $(head -3 "$T/verify-bad.txt")"
rm -rf "$OUT" && mkdir -p "$OUT"
if timeout 120 "$CLI" restore "$STORE" --to "$OUT" >"$T/restore-bad.txt" 2>&1; then
  fail "restore succeeded without the referenced container"
fi
grep -q "${containers[0]}, which is missing" "$T/restore-bad.txt" ||
  fail "restore does not name the missing container: $(head -3 "$T/restore-bad.txt")"
ok "a missing referenced container is named by verify and restore"
