#!/usr/bin/env bash
# Runs each forwarder-kill scenario of tests/faults N times in a row (default 20), outside
# CI, to find the flaky ones a single `make test` run passes by luck. "repeated"
# (test_kill_repeated.sh) kills the forwarder 1-3 times at random moments of a 4-rank,
# 6-step job, its exit wait included: each run another draw (its seed is in the log). Prints one row per
# scenario (scenario | runs | passed | failed) and exits 1 if any run failed. The log of a
# failed run is kept in the log directory printed at the end; it names the test's kept
# temporary directory ("(kept ... for inspection)": $T/ckptfwd.log, the writer output).
#
# usage: tools/faults/loop_kill_points.sh [N] [BUILD_DIR]   (defaults: 20, build)
# Environment: CKPTFWD_LOOP_SCENARIOS (space-separated subset, e.g. "midwrite fsync"),
#              CKPTFWD_TEST_TIMEOUT (seconds per run, default 300).
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-20}
BUILD=${2:-build}
[[ "$BUILD" = /* ]] || BUILD="$PWD/$BUILD"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || {
  echo "usage: $0 [N] [BUILD_DIR]  (N: a positive number of runs)" >&2
  exit 2
}
[[ -x "$BUILD/bin/fault_writer" ]] || {
  echo "$0: $BUILD/bin/fault_writer is missing: build first (make build BUILD=...)" >&2
  exit 2
}
SCENARIOS=${CKPTFWD_LOOP_SCENARIOS:-midwrite fsync reopen exitwait exitwait_twice nospawn repeated}
TIMEOUT=${CKPTFWD_TEST_TIMEOUT:-300}
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/ckptfwd-kill-loop.XXXXXX")
exec </dev/null

declare -A pass fail
any_failed=0
for s in $SCENARIOS; do
  script=$REPO/tests/faults/test_kill_$s.sh
  [[ -f "$script" ]] || {
    echo "$0: no scenario $script" >&2
    exit 2
  }
  pass[$s]=0
  fail[$s]=0
  for ((i = 1; i <= N; i++)); do
    log=$LOGDIR/$s.$i.log
    start=$SECONDS
    # Same limit and process-group handling as tests/run_all.sh.
    timeout --kill-after=20 "$TIMEOUT" bash "$script" "$BUILD" >"$log" 2>&1
    rc=$?
    if [[ $rc -eq 0 ]]; then
      pass[$s]=$((pass[$s] + 1))
      rm -f "$log"
    else
      fail[$s]=$((fail[$s] + 1))
      any_failed=1
      kept=$(grep -o '(kept [^ ]* for inspection)' "$log" | awk '{print $2}')
      echo "FAIL $s run $i (exit $rc, $((SECONDS - start))s): log $log${kept:+, kept $kept}"
      grep -m1 '^FAIL' "$log" | sed 's/^/    /'
    fi
  done
  echo "done $s: ${pass[$s]}/$N passed"
done

echo
printf '%-10s | %4s | %6s | %6s\n' scenario runs passed failed
for s in $SCENARIOS; do
  printf '%-10s | %4d | %6d | %6d\n' "$s" "$N" "${pass[$s]}" "${fail[$s]}"
done
if [[ $any_failed -ne 0 ]]; then
  echo "logs of failed runs: $LOGDIR"
  exit 1
fi
rm -rf "$LOGDIR"
exit 0
