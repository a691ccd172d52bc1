#!/usr/bin/env bash
# The forwarder is killed with SIGKILL while holding closed but uncommitted versions
# (CKPTFWD_BATCH_WINDOW_MS=60000, so it would not have sealed a batch yet). The staged files
# survive in the staging directory; a forwarder started again for the same session
# (`ckptfwd-forwarder --daemon`, same environment) recovers them, and after `ckptfwd drain`
# every file restores byte-identical: nothing is lost.
#
# The writer (without its fsync, which would force a commit) runs in the background and holds
# before exiting, so the kill happens with every file closed and the process still alive.
# Then it is released and exits with its forwarder gone (its exit status is recorded, not
# asserted: the data is the point; the library may also start a new forwarder itself, in
# which case the explicit --daemon start must still succeed).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich

ckf_std_dirs
export CKPTFWD_BATCH_WINDOW_MS=60000
export CKPTFWD_IDLE_EXIT=120   # must not exit on its own while the test inspects it

timeout 120 mpiexec.mpich -n 2 "$WRITER" write "$DIRECT" --no-fsync >/dev/null || fail "direct run failed"

env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" timeout 120 \
  mpiexec.mpich -n 2 "$WRITER" write "$CAP" --no-fsync --hold "$T/release" >"$T/write.out" 2>&1 &
writer=$!
wait_for "[[ \$(grep -c 'wrote 8 files' '$T/write.out') -eq 2 ]]" 60 ||
  fail "the writer did not report its files closed: $(tail -5 "$T/write.out")"
mapfile -t pids < <(session_forwarders)
[[ ${#pids[@]} -eq 1 ]] || fail "expected one forwarder for the session, found ${#pids[@]}"
[[ $(count_containers "$STORE") -eq 0 ]] || fail "a container was committed before the kill (batch window 60 s): the test shows nothing"
n_staged=$(find "$CKPTFWD_STAGE_DIR" -name 'v*.data' | wc -l)
[[ $n_staged -ge 16 ]] || fail "only $n_staged staged v*.data files before the kill (want 16)"
kill -KILL "${pids[0]}"
ok "killed forwarder ${pids[0]} holding $n_staged staged versions, none committed"

sleep 0.5
[[ $(find "$CKPTFWD_STAGE_DIR" -name 'v*.data' | wc -l) -ge 16 ]] || fail "staged files disappeared after the kill"
touch "$T/release"
set +e
wait "$writer"
wrc=$?
set -e
echo "note: the writer exited $wrc after losing its forwarder"

timeout 60 "$FWD" --daemon >"$T/restart.out" 2>&1 || fail "ckptfwd-forwarder --daemon failed to restart: $(tail -5 "$T/restart.out")"
drain
[[ $(count_containers "$STORE") -ge 1 ]] || fail "drain after the restart committed nothing"
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify failed: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "after the restart and drain all $(ls "$DIRECT" | wc -l) files restore byte-identical"
# Committed versions must give their staging space (node memory) back soon, not at exit.
staged_left() { find "$CKPTFWD_STAGE_DIR" -name 'v*.data' | wc -l; }
wait_for '[[ $(staged_left) -eq 0 ]]' 10 ||
  fail "$(staged_left) staged v*.data files still in $CKPTFWD_STAGE_DIR 10 s after their commit (forwarder still running: $(session_forwarders | tr '\n' ' '))"
ok "the staged files were released after the commit"
