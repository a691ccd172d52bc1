#!/usr/bin/env bash
# SIGTERM always ends a forwarder within a bounded time, also when it cannot commit: twelve
# files captured in twelve directories, each with its own default store, which cannot be
# created (its .ckptfwd is a regular file). Told to stop, the forwarder drains for at most
# CKPTFWD_TERM_DRAIN_S (here 4 s; each store's batch alone retries for about 4 s, one batch
# after the other), then exits, logging the files it leaves staged. They stay staged, and
# once the stores are fixed a new forwarder commits them byte-exact.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
# The writers leave without an exit wait; the files stay closed, not committed, until the
# drain (a batch window longer than the test).
export CKPTFWD_IDLE_EXIT=0 CKPTFWD_EXIT_WAIT=0 CKPTFWD_BATCH_WINDOW_MS=600000 \
  CKPTFWD_WAVE_WINDOW_MS=600000 CKPTFWD_TERM_DRAIN_S=4
n=12
globs=()
for i in $(seq 1 $n); do
  mkdir -p "$T/d$i"
  : >"$T/d$i/.ckptfwd" # the default store of $T/d$i/* cannot be created: ENOTDIR
  globs+=("$T/d$i/*")
done
CAPTURE=$(IFS=:; echo "${globs[*]}")
"$FW" "$DIRECT/f.dat" 256K >/dev/null
for i in $(seq 1 $n); do
  with_lib "$FW" "$T/d$i/f.dat" 256K >"$T/w$i.out" 2>&1 || fail "writer $i failed: $(cat "$T/w$i.out")"
done
[[ $(find "$CKPTFWD_STAGE_DIR" -name 'v*.meta' | wc -l) -eq $n ]] || fail "expected $n staged versions"
mapfile -t pids < <(session_forwarders)
[[ ${#pids[@]} -eq 1 ]] || fail "expected one forwarder: ${pids[*]}"
start=$SECONDS
kill -TERM "${pids[0]}"
while [[ -n "$(session_forwarders)" ]]; do
  [[ $((SECONDS - start)) -le 40 ]] || fail "the forwarder still runs 40 s after SIGTERM"
  sleep 0.5
done
took=$((SECONDS - start))
[[ $took -le 20 ]] || fail "the forwarder took $took s to end after SIGTERM (CKPTFWD_TERM_DRAIN_S=4)"
ok "SIGTERM ended the forwarder after $took s while no store took a commit"
grep -q "still draining after 4 s (CKPTFWD_TERM_DRAIN_S)" "$CKPTFWD_LOG" || fail "the log does not say the drain stopped: $(tail -5 "$CKPTFWD_LOG")"
grep -q "file versions are not committed: .*/f.dat" "$CKPTFWD_LOG" || fail "the log does not name the files left staged: $(tail -5 "$CKPTFWD_LOG")"
[[ $(find "$CKPTFWD_STAGE_DIR" -name 'v*.meta' | wc -l) -eq $n ]] || fail "the uncommitted versions are not all kept in staging"
ok "the $n files stay staged, and the log says so: $(grep -m1 'not committed:' "$CKPTFWD_LOG" | cut -c1-160)"

for i in $(seq 1 $n); do rm "$T/d$i/.ckptfwd"; done
export CKPTFWD_BATCH_WINDOW_MS=300 CKPTFWD_WAVE_WINDOW_MS=300 CKPTFWD_IDLE_EXIT=5
timeout 60 "$FWD" --daemon || fail "ckptfwd-forwarder --daemon failed"
drain
for i in $(seq 1 $n); do
  STORE=$T/d$i/.ckptfwd assert_store_has "$T/d$i/f.dat" "$DIRECT/f.dat"
done
ok "a new forwarder recovered and committed all $n files once the stores were fixed"
