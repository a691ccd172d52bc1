#!/usr/bin/env bash
# CKPTFWD_KEEP: a job writes 4 checkpoint steps (one file per "rank", the newest step
# replacing the previous through write-to-temporary-then-rename, as many codes do). Each
# file is copied by its own process that waits for its commit at exit, so every version is
# one container. With CKPTFWD_KEEP=2 the store keeps the containers of the last two
# versions of each path (steps 3 and 4) only: the older ones are deleted, `ckptfwd verify` stays clean (the manifest says
# which were dropped), and `ckptfwd restore` gives the newest step byte for byte. Without
# the knob every step's container stays.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs

for n in 1 2 3 4; do
  for r in 0 1 2; do head -c 200000 /dev/urandom >"$T/step$n.r$r"; done
done
step() {  # step DIR N: the step's 3 files of 200 KiB, written to .tmp then renamed
  local dir=$1 n=$2 r
  for r in 0 1 2; do
    cp "$T/step$n.r$r" "$dir/rank$r.tmp" && mv "$dir/rank$r.tmp" "$dir/rank$r.ckpt"
  done
}

for n in 1 2 3 4; do
  step "$DIRECT" $n
  CKPTFWD_KEEP=2 with_lib bash -c "$(declare -f step); T=$T; step $CAP $n" 2>"$T/w.err" ||
    fail "step $n under the library failed: $(tail -5 "$T/w.err")"
  drain
done
[[ $(count_containers "$STORE") -eq 6 ]] ||
  fail "CKPTFWD_KEEP=2 after 4 steps of 3 files: $(count_containers "$STORE") containers in $STORE, expected 6: $(ls "$STORE")"
# The survivors are the 6 newest (container names end in the forwarder's sequence number).
newest=$(grep -o -E $'^(commit|create)\t[^\t]*' "$STORE/MANIFEST" | cut -f2 | tail -6 | sort)
[[ "$(ls "$STORE" | grep '\.ckc$' | sort)" == "$newest" ]] ||
  fail "the containers left are not the 6 newest commits: $(ls "$STORE"), newest: $newest"
ok "CKPTFWD_KEEP=2: 4 steps of 3 files left the 6 containers of steps 3 and 4"
grep -q $'^drop\t' "$STORE/MANIFEST" || fail "no drop record in $STORE/MANIFEST"
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify after garbage collection: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
for r in 0 1 2; do
  assert_same_bytes "$DIRECT/rank$r.ckpt" "$(restored_file "$OUT" "$CAP/rank$r.ckpt")" "restored rank$r.ckpt"
done
# The counters reach the stats file when the forwarder leaves (idle exit).
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"
removed=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder containers_removed) || fail "bad stats: $removed"
[[ $removed -ge 2 ]] || fail "stats count $removed containers_removed, expected at least 2"
ok "verify clean, the newest step restores byte for byte, $removed old containers removed"

# Without CKPTFWD_KEEP nothing is deleted.
ALL=$T/all
mkdir -p "$ALL"
CAPTURE="$ALL/*"
for n in 1 2 3; do
  with_lib bash -c "$(declare -f step); T=$T; step $ALL $n" || fail "step $n (keep all) failed"
  drain
done
[[ $(count_containers "$ALL/.ckptfwd") -eq 9 ]] ||
  fail "default CKPTFWD_KEEP=0: $(count_containers "$ALL/.ckptfwd") containers after 3 steps of 3 files, expected 9"
ok "default: every step's container kept"
