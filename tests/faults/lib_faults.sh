# shellcheck shell=bash
# Helpers of the fault-injection tests (sourced after tests/integration/lib.sh and ckf_init).

FW=$BUILD/bin/fault_writer
[[ -x "$FW" ]] || fail "$FW is missing: build first"

# kill_forwarders: SIGKILL this session's forwarders and wait until they are gone.
kill_forwarders() {
  local pids
  mapfile -t pids < <(session_forwarders)
  [[ ${#pids[@]} -ge 1 ]] || fail "no forwarder of session $CKPTFWD_JOB_ID to kill"
  # One may exit on its own meanwhile (idle exit, a test kill point): gone either way.
  kill -KILL "${pids[@]}" 2>/dev/null || true
  wait_for '[[ -z "$(session_forwarders)" ]]' 10 || fail "forwarder ${pids[*]} survived SIGKILL"
  ok "killed forwarder ${pids[*]}"
}

# wait_line FILE TEXT [SECONDS]: waits until FILE has a line TEXT (the writer's progress).
wait_line() {
  wait_for "grep -qx '$2' '$1' 2>/dev/null" "${3:-60}" ||
    fail "the writer never printed '$2': $(tail -5 "$1" 2>/dev/null)"
}

# kill_at_pause NAME PID LINE: once the writer PID (output in $T/NAME.out) printed LINE,
# SIGKILLs the session's forwarders, opens the writer's gate ($T/gate-NAME) and fails
# unless the writer then exits 0.
kill_at_pause() {
  local name=$1 writer=$2 line=$3 rc=0
  wait_line "$T/$name.out" "$line"
  kill_forwarders
  touch "$T/gate-$name"
  wait "$writer" || rc=$?
  [[ $rc -eq 0 ]] || fail "$name: the writer saw an error (exit $rc): $(cat "$T/$name.out")"
}

# kill_marker_fired STEP: the forwarder stopped itself at STEP (CKPTFWD_TEST_KILL_AT).
kill_marker_fired() {
  compgen -G "$CKPTFWD_STAGE_DIR/ckptfwd-*/test-killed-$1" >/dev/null ||
    grep -q "CKPTFWD_TEST_KILL_AT=$1: killing myself" "$CKPTFWD_LOG" 2>/dev/null
}

# assert_store_has PATH ORACLE: `ckptfwd restore` of the store, right now, gives PATH with
# the oracle's bytes (no drain first: the application's exit wait promised it committed).
assert_store_has() {
  local path=$1 oracle=$2 out
  out=$(mktemp -d "$T/restore.XXXXXX")
  timeout 120 "$CLI" restore "$STORE" --to "$out" "$path" >"$T/restore.out" 2>&1 ||
    fail "ckptfwd restore of $path failed right after the job: $(tail -3 "$T/restore.out")"
  assert_same_bytes "$oracle" "$(restored_file "$out" "$path")" "$path from the store"
}

# assert_verify_clean: `ckptfwd verify STORE` passes.
assert_verify_clean() {
  timeout 120 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 ||
    fail "ckptfwd verify $STORE: $(tail -5 "$T/verify.out")"
}

# need_attacker: the tests of other users on the node act as uid 65534 through setpriv
# (root only); sets ATTACKER to the command prefix that does it.
need_attacker() {
  need_cmd setpriv
  [[ $(id -u) -eq 0 ]] || skip "needs root to act as the attacker uid 65534"
  ATTACKER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
}

# kill_after_close OUT FILE SIZE [OPTIONS...]: runs `fault_writer FILE SIZE OPTIONS` under
# the library (environment assignments before the call reach it, as with with_lib) with
# its exit held, kills this session's forwarders once it has closed its files, then lets
# it exit (into its exit wait). Its output goes to OUT, its exit status to KILLED_RC.
# With KILL_AFTER_CLOSE_EMPTY=1 the store must have no container when the kill comes (the
# files are closed but not committed: a batch window long enough).
kill_after_close() {
  local out=$1 gate writer
  shift
  gate=$(mktemp -u "$T/gate.XXXXXX")
  with_lib "$FW" "$@" --hold-exit "$gate" >"$out" 2>&1 &
  writer=$!
  wait_line "$out" closed
  if [[ ${KILL_AFTER_CLOSE_EMPTY:-0} -eq 1 && $(count_containers "$STORE") -ne 0 ]]; then
    fail "already committed before the kill: the test shows nothing"
  fi
  kill_forwarders
  touch "$gate"
  KILLED_RC=0
  wait "$writer" || KILLED_RC=$?
}

# n1_first_commits FILE FIRST SECOND FW_OPTIONS...: the N-1 job of two simulated nodes of 2
# ranks each, `fault_writer FILE 4M FW_OPTIONS...` under the library: every rank opens FILE
# before any rank writes; FIRST's ranks close and exit, SECOND's hold their exit and their
# forwarder's batch window is long, so FIRST commits first. Returns once FIRST's record is
# in the MANIFEST, with the job in the background (N1_JOB; output in $T/FIRST.out) and
# SECOND's ranks waiting for $T/gate: touch it, then `wait "$N1_JOB"`.
n1_first_commits() {
  local f=$1 first=$2 second=$3
  shift 3
  rm -f "$T/gate" "$T/opened"
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" timeout 120 mpiexec.mpich \
    -n 2 -env CKPTFWD_NODE_ID "$first" "$FW" "$f" 4M "$@" --opened-gate "$T/opened" : \
    -n 2 -env CKPTFWD_NODE_ID "$second" -env CKPTFWD_BATCH_WINDOW_MS 60000 \
    "$FW" "$f" 4M "$@" --opened-gate "$T/opened" --hold-exit "$T/gate" \
    >"$T/$first.out" 2>&1 &
  N1_JOB=$!
  wait_for "[[ \$(grep -c '^opened' '$T/$first.out') -eq 4 ]]" 60 ||
    fail "[$first first] the ranks did not all open: $(cat "$T/$first.out")"
  touch "$T/opened"
  wait_for "grep -q \"\$(basename '$f')\" '$STORE/MANIFEST' 2>/dev/null" 60 ||
    fail "[$first first] $first never committed its part"
}

# stage_on_small_tmpfs SIZE: stages on a tmpfs of SIZE (mount -o size=) mounted for the
# test at a new short directory (the session's socket path must fit), in SMALL and
# CKPTFWD_STAGE_DIR; skips without root or mount. At exit the session's forwarders go first
# (SIGKILL: their staged files are on the tmpfs about to go), then the mount, then the
# usual cleanup with the test's status.
stage_on_small_tmpfs() {
  [[ $(id -u) -eq 0 ]] || skip "needs root to mount a small tmpfs for staging"
  SMALL=$(mktemp -d /tmp/ckf-stage.XXXXXX)
  mount -t tmpfs -o size="$1" tmpfs "$SMALL" 2>/dev/null || { rmdir "$SMALL"; skip "cannot mount a tmpfs here"; }
  trap unmount_small_stage EXIT
  export CKPTFWD_STAGE_DIR=$SMALL
}
unmount_small_stage() {
  local rc=$? p
  for p in $(session_forwarders); do kill -KILL "$p" 2>/dev/null || true; done
  wait_for '[[ -z "$(session_forwarders)" ]]' 10 || true
  umount -l "$SMALL" 2>/dev/null || true
  rmdir "$SMALL" 2>/dev/null || true
  (exit $rc)
  ckf_cleanup
}
