#!/usr/bin/env bash
# Runs every test: the GoogleTest unit tests through ctest (each ctest test counts as one),
# then each tests/integration/test_*.sh in name order (each counts as one), with a time
# limit per script. Prints PASS/FAIL per test, the tail of a failed script's log, and ends
# with "<N> passed, <M> failed"; exits non-zero if anything failed.
#
# usage: tests/run_all.sh [BUILD_DIR]     (default: build; also CKPTFWD_BUILD)
# Environment: CKPTFWD_TEST_TIMEOUT (seconds per script, default 300),
#              CKPTFWD_TEST_FILTER (only scripts whose name contains it),
#              CKPTFWD_TEST_STAGE=tmpfs (the scripts stage on /dev/shm, the forwarder's
#              default, instead of on the disk: tests/integration/lib.sh).
# Works with CI=true and no stdin (nothing here reads stdin or needs a terminal).
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-${CKPTFWD_BUILD:-build}}
[[ "$BUILD" = /* ]] || BUILD="$PWD/$BUILD"
TIMEOUT=${CKPTFWD_TEST_TIMEOUT:-300}
FILTER=${CKPTFWD_TEST_FILTER:-}
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/ckptfwd-tests.XXXXXX")
exec </dev/null

passed=0
failed=0
skipped=0
failures=()

if [[ ! -d "$BUILD" ]]; then
  echo "run_all.sh: build directory $BUILD does not exist (run make, or pass the build dir)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

# --- unit tests ---------------------------------------------------------------------------
if [[ -z "$FILTER" ]]; then
  echo "== unit tests (ctest --test-dir $BUILD)"
  junit=$LOGDIR/ctest.xml
  start=$SECONDS
  ctest --test-dir "$BUILD" --output-on-failure --timeout "$TIMEOUT" \
    --output-junit "$junit" >"$LOGDIR/ctest.log" 2>&1
  ctest_rc=$?
  # ctest's own summary: "100% tests passed, 0 tests failed out of 42".
  summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOGDIR/ctest.log" | tail -1)
  if [[ -n "$summary" ]]; then
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
    nfail=$(sed -E 's/.*, ([0-9]+) tests? failed.*/\1/' <<<"$summary")
    passed=$((passed + total - nfail))
    failed=$((failed + nfail))
    echo "$summary ($((SECONDS - start))s)"
    if [[ $nfail -gt 0 ]]; then
      # --output-on-failure put each failed test's output in the log; show its end.
      grep -v -E '^\s*[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' "$LOGDIR/ctest.log" | tail -n 40 | sed 's/^/    /'
      grep -E '^\s+[0-9]+ - ' "$LOGDIR/ctest.log" | sed -E 's/^\s+/FAIL unit: /'
      failures+=("unit tests: $nfail (log $LOGDIR/ctest.log)")
    fi
  elif grep -q 'No tests were found' "$LOGDIR/ctest.log"; then
    echo "no unit tests registered in $BUILD"
  else
    # ctest itself failed (bad build dir, crash in discovery): one failure, show why.
    echo "FAIL ctest (exit $ctest_rc)"
    tail -n 30 "$LOGDIR/ctest.log" | sed 's/^/    /'
    failed=$((failed + 1))
    failures+=("ctest (exit $ctest_rc)")
  fi
fi

# --- integration and fault-injection tests ---------------------------------------------------
echo "== integration tests (tests/integration, tests/faults, ${TIMEOUT}s each)"
for script in "$REPO"/tests/integration/test_*.sh "$REPO"/tests/faults/test_*.sh; do
  [[ -e "$script" ]] || continue
  name=$(basename "$script" .sh)
  [[ -z "$FILTER" || "$name" == *"$FILTER"* ]] || continue
  log=$LOGDIR/$name.log
  start=$SECONDS
  # timeout signals the script's whole process group (mpiexec and its ranks too); the script's
  # trap then drains and stops its own forwarder. --kill-after: a test that ignores it dies.
  timeout --kill-after=20 "$TIMEOUT" bash "$script" "$BUILD" >"$log" 2>&1 </dev/null
  rc=$?
  secs=$((SECONDS - start))
  if [[ $rc -eq 0 ]]; then
    echo "PASS $name (${secs}s)"
    passed=$((passed + 1))
  elif [[ $rc -eq 77 ]]; then
    echo "SKIP $name: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP: //')"
    skipped=$((skipped + 1))
  else
    reason="exit $rc"
    [[ $rc -eq 124 || $rc -eq 137 ]] && reason="timed out after ${TIMEOUT}s"
    echo "FAIL $name ($reason, ${secs}s)"
    tail -n 25 "$log" | sed 's/^/    /'
    failed=$((failed + 1))
    failures+=("$name ($reason)")
  fi
done

echo
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "failed: ${failures[*]}"
  echo "logs: $LOGDIR"
else
  rm -rf "$LOGDIR"
fi
[[ $skipped -eq 0 ]] || echo "$skipped skipped"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
