# shellcheck shell=bash
# Shared helpers for the integration tests (sourced, not run).
#
# Every test gets its own temporary directory, job id and staging directory, so tests never
# share a forwarder, a socket or staged files, even when run side by side. The trap set by
# ckf_init drains and stops this test's forwarder and removes the temporary directory (kept
# on failure, its path printed, for a post-mortem).
#
# Usage in a test:
#   source "$(dirname "$0")/lib.sh"
#   ckf_init "$@"                 # BUILD dir from $1, $CKPTFWD_BUILD, or ./build
#   CAPTURE="$T/ckpt/*"           # what with_lib captures
#   with_lib "$WRITER" write "$T/ckpt"
#   ...; pass "what was shown"

set -euo pipefail

CKF_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Prints a failure with the library/forwarder log tail and exits 1.
fail() {
  echo "FAIL: $*" >&2
  if [[ -n "${CKPTFWD_LOG:-}" && -s "${CKPTFWD_LOG}" ]]; then
    echo "--- last lines of $CKPTFWD_LOG ---" >&2
    tail -n 20 "$CKPTFWD_LOG" >&2
  fi
  CKF_FAILED=1
  exit 1
}
ok() { echo "ok: $*"; }
# A test that cannot run here (missing tool) exits 77; run_all.sh reports it as skipped.
skip() {
  echo "SKIP: $*"
  exit 77
}
need_cmd() {
  local c
  for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "command $c not found"; done
}

# Finds the build, the three project artifacts and the test programs; creates $T.
ckf_init() {
  local build=${1:-${CKPTFWD_BUILD:-build}}
  [[ "$build" = /* ]] || build="$CKF_REPO/$build"
  BUILD=$build
  LIB=$BUILD/lib/libckptfwd.so
  # The library for MPICH-ABI programs: the same capture plus the MPI wrappers.
  LIB_MPICH=$BUILD/lib/libckptfwd-mpich.so
  FWD=$BUILD/bin/ckptfwd-forwarder
  CLI=$BUILD/bin/ckptfwd
  WRITER=$BUILD/bin/ckpt_writer
  OMPI_HELLO=$BUILD/bin/ompi_hello
  local f
  for f in "$LIB" "$FWD" "$CLI" "$WRITER"; do
    [[ -e "$f" ]] || fail "$f is missing: build first (cmake --build $BUILD, or make)"
  done
  # Nothing from the caller's environment may leak in and change what is captured or where.
  unset LD_PRELOAD CKPTFWD_CAPTURE CKPTFWD_STORE CKPTFWD_CONFIG CKPTFWD_DISABLE \
    CKPTFWD_NO_SPAWN CKPTFWD_STAGE_LIMIT CKPTFWD_BATCH_WINDOW_MS CKPTFWD_FORWARDER \
    CKPTFWD_NODE_ID SLURMD_NODENAME SLURM_JOB_ID PBS_JOBID 2>/dev/null || true
  CKF_NAME=$(basename "$0" .sh)
  T=$(mktemp -d "${TMPDIR:-/tmp}/ckf-$CKF_NAME.XXXXXX")
  mkdir -p "$T/stage"
  export CKPTFWD_JOB_ID="it-$CKF_NAME-$$-$RANDOM"
  export CKPTFWD_STAGE_DIR="$T/stage"
  export CKPTFWD_IDLE_EXIT=2
  export CKPTFWD_LOG="$T/ckptfwd.log"
  export CKPTFWD_STATS_FILE="$T/stats.jsonl"
  # Open MPI refuses to run as root without these (CI containers run as root).
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  CAPTURE=""
  CKF_FAILED=0
  CKF_CLEANUP_HOOKS=()  # run at exit once the forwarders are gone (e.g. dfs_teardown)
  trap ckf_cleanup EXIT
  # CKPTFWD_TEST_STAGE=tmpfs: every test stages on /dev/shm, as the forwarder does by default.
  [[ ${CKPTFWD_TEST_STAGE:-} == tmpfs ]] && ckf_stage_on_tmpfs
  trap 'echo "FAIL: interrupted (timeout?)" >&2; exit 143' TERM INT
  echo "test $CKF_NAME: build $BUILD, temp $T, job $CKPTFWD_JOB_ID"
}

# ckf_stage_on_tmpfs: stages in a directory of /dev/shm, the forwarder's default, instead
# of $T/stage on the test machine's disk: tmpfs behaves differently (a read of a hole
# through a mapping makes a data page there). Removed with $T; skips without a tmpfs.
ckf_stage_on_tmpfs() {
  [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] || skip "/dev/shm is not a tmpfs"
  CKF_TMPFS_STAGE=$(mktemp -d /dev/shm/ckf-$CKF_NAME.XXXXXX)
  export CKPTFWD_STAGE_DIR=$CKF_TMPFS_STAGE
}

# PIDs of forwarders that belong to this test's session (same binary and same job id), so
# cleanup never touches anyone else's forwarder.
# The layout most tests use: a run without the library into $DIRECT, the captured
# directory $CAP (glob $CAPTURE) with its default store $STORE, and restores into $OUT.
ckf_std_dirs() {
  DIRECT=$T/direct
  CAP=$T/ckpt
  OUT=$T/restored
  STORE=$CAP/.ckptfwd
  CAPTURE="$CAP/*"
  mkdir -p "$DIRECT" "$CAP" "$OUT"
}

# Pids of the forwarders whose environment holds the entry $1 (NAME=VALUE, as it is).
forwarders_with_env() {
  local p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == */ckptfwd-forwarder ]] || continue
    # (the process may be gone by now: the shell's own message for the redirect is hushed too)
    if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF -- "$1"; then
      echo "${p#/proc/}"
    fi
  done
}
session_forwarders() { forwarders_with_env "CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID"; }

ckf_cleanup() {
  local rc=$?
  set +e
  timeout 30 "$CLI" drain >/dev/null 2>&1
  local pid i
  for pid in $(session_forwarders); do kill -TERM "$pid" 2>/dev/null; done
  # Let it finish (it writes its stats and removes its session) before removing $T under it.
  for ((i = 0; i < 50; i++)); do [[ -z "$(session_forwarders)" ]] && break; sleep 0.1; done
  for pid in $(session_forwarders); do kill -KILL "$pid" 2>/dev/null; done
  local hook
  for hook in "${CKF_CLEANUP_HOOKS[@]}"; do "$hook"; done
  if [[ $rc -eq 0 && $CKF_FAILED -eq 0 ]] || [[ $rc -eq 77 ]]; then
    rm -rf "$T" 2>/dev/null || { sleep 0.5; rm -rf "$T"; }
    [[ -n ${CKF_TMPFS_STAGE:-} ]] && rm -rf "$CKF_TMPFS_STAGE"
  else
    [[ -n ${CKF_TMPFS_STAGE:-} ]] && echo "(kept the staging directory $CKF_TMPFS_STAGE)" >&2
    echo "(kept $T for inspection)" >&2
  fi
  exit $rc
}

# ckf_no_job_id: runs outside any batch system with no job id (an empty CKPTFWD_JOB_ID
# counts as unset), so the job identity is the digest of the capture globs; the forwarders
# then carry no CKPTFWD_JOB_ID for ckf_cleanup to find them by, so they are stopped by
# stage dir (stop_local_forwarders, also at exit).
ckf_no_job_id() {
  unset SLURM_JOB_ID PBS_JOBID LSB_JOBID FLUX_JOB_ID
  export CKPTFWD_JOB_ID=
  CKF_CLEANUP_HOOKS+=(stop_local_forwarders)
}
stop_local_forwarders() {
  local p
  for p in $(forwarders_with_env "CKPTFWD_STAGE_DIR=$CKPTFWD_STAGE_DIR"); do kill -TERM "$p" 2>/dev/null; done
  sleep 0.5
}

# Runs a command under the library, capturing $CAPTURE.
with_lib() {
  [[ -n "$CAPTURE" ]] || fail "with_lib: set CAPTURE first"
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$@"
}

# `ckptfwd drain` for this session; a failure to drain is a test failure.
drain() {
  timeout 120 "$CLI" drain || fail "ckptfwd drain exited $? (session $CKPTFWD_JOB_ID)"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# Every file of $DIRECT (a run without the library) equals the same name below $CAP read
# by a new job (another job id: from the store, through the library).
assert_read_back_by_new_job() {
  local f
  for f in $(cd "$DIRECT" && ls); do
    [[ -f $DIRECT/$f ]] || continue
    env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-read" \
      cat "$CAP/$f" >"$T/readback"
    assert_same_bytes "$DIRECT/$f" "$T/readback" "$f read back by a new job"
  done
  ok "all $(find "$DIRECT" -maxdepth 1 -type f | wc -l) files read back whole by a new job"
}

# assert_same_bytes EXPECTED ACTUAL [what]
assert_same_bytes() {
  [[ -f "$2" ]] || fail "${3:-$2}: $2 does not exist (expected the bytes of $1)"
  local a b
  a=$(sha "$1")
  b=$(sha "$2")
  [[ "$a" == "$b" ]] || fail "${3:-$2}: sha256 $b differs from the direct run's $a ($1 vs $2; sizes $(stat -c %s "$1") vs $(stat -c %s "$2"))"
}

# Where `ckptfwd restore STORE --to OUT` put the file the application wrote at ABS_PATH.
# The store keeps absolute paths; restore is expected to recreate them under OUT (OUT/abs/path);
# a flat OUT/<name> layout is accepted too. Prints nothing if neither exists.
restored_file() {
  local out=$1 abs=$2
  if [[ -e "$out$abs" ]]; then
    echo "$out$abs"
  elif [[ -e "$out/$(basename "$abs")" ]]; then
    echo "$out/$(basename "$abs")"
  fi
}

# assert_restored_tree ORACLE_DIR CAPTURED_DIR OUT: every file of the direct run (ORACLE_DIR)
# was restored from the capture of CAPTURED_DIR into OUT with identical bytes (permission
# bits are test_file_modes.sh's subject), and restore
# produced no extra files (no stale .tmp, no unlinked file).
assert_restored_tree() {
  local oracle=$1 captured=$2 out=$3 f name r n_oracle n_out
  n_oracle=0
  for f in "$oracle"/*; do
    [[ -f "$f" ]] || continue
    name=$(basename "$f")
    r=$(restored_file "$out" "$captured/$name")
    [[ -n "$r" ]] || fail "restore did not produce $captured/$name (looked in $out$captured/ and $out/)"
    assert_same_bytes "$f" "$r" "restored $name"
    n_oracle=$((n_oracle + 1))
  done
  n_out=$(find "$out" -type f | wc -l)
  [[ $n_out -eq $n_oracle ]] || fail "restore wrote $n_out files, the direct run has $n_oracle: $(find "$out" -type f | sort | head -50 | tr '\n' ' ')"
}

# restore_store STORE OUT: `ckptfwd restore STORE --to OUT`; a failure is a test failure.
restore_store() {
  timeout 120 "$CLI" restore "$1" --to "$2" </dev/null >"$T/restore.out" 2>&1 ||
    fail "ckptfwd restore $1 --to $2 failed: $(tail -5 "$T/restore.out")"
}

# Containers (*.ckc) in a store.
count_containers() { find "$1" -maxdepth 1 -name '*.ckc' -type f 2>/dev/null | wc -l; }

# stats_sum FILE SOURCE KEY: sum of KEY over the JSON lines of FILE whose "source" is SOURCE
# (every line must be a complete JSON object: a torn line is a failure, reported).
stats_sum() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
path, source, key = sys.argv[1:]
total = 0
try:
    lines = open(path).read().splitlines()
except FileNotFoundError:
    lines = []
for n, line in enumerate(lines, 1):
    if not line.strip():
        continue
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit(f"{path}:{n}: not a JSON object ({e}): {line[:200]}")
    if obj.get("source") == source:
        total += obj.get(key, 0)
print(total)
EOF
}

# After the job: drains, waits for the forwarder's idle exit (its counters reach the stats
# file then) and fails unless the forwarder or the library counted a fallback.
assert_fallback_counted() {
  local fwd cli
  drain
  wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit after going idle (CKPTFWD_IDLE_EXIT=2)"
  fwd=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder fallbacks) || fail "stats file is not JSON lines: $fwd"
  cli=$(stats_sum "$CKPTFWD_STATS_FILE" client fallbacks) || fail "stats file is not JSON lines: $cli"
  [[ $((fwd + cli)) -gt 0 ]] || fail "no fallback counted (forwarder $fwd, client $cli): $(cat "$CKPTFWD_STATS_FILE" 2>/dev/null)"
  ok "fallback counted (forwarder $fwd, client $cli)"
}

# Waits (up to $2 seconds, default 10) until a command succeeds.
wait_for() {
  local cmd=$1 limit=${2:-10} i
  for ((i = 0; i < limit * 10; i++)); do
    eval "$cmd" && return 0
    sleep 0.1
  done
  return 1
}
