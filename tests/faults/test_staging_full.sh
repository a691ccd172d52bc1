#!/usr/bin/env bash
# Staging on a tmpfs that runs out of space partway through a write: a 1 MiB write into the
# staged file takes only the bytes that still fit (a short write, not ENOSPC). What must
# hold: the application never sees the short count; the library moves the file to its
# real path and does the whole write again there, so every call returns in full and the
# real file is byte for byte what a run without the library writes. Before, write()
# returned a short count (1,040,384 of 1,048,576 in one run) and the writer reported a
# failed write.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
stage_on_small_tmpfs 3m

for mode in trunc; do
  if [[ $mode == append ]]; then
    "$FW" "$DIRECT/$mode.dat" 1M >/dev/null || fail "direct run of the first part failed"
    with_lib "$FW" "$CAP/$mode.dat" 1M >/dev/null || fail "the first 1 MiB through the library failed"
  fi
  "$FW" "$DIRECT/$mode.dat" 8M --open "$mode" --seed 2 >/dev/null || fail "direct run of $mode failed"
  rc=0
  with_lib "$FW" "$CAP/$mode.dat" 8M --open "$mode" --seed 2 >"$T/$mode.out" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || fail "writer ($mode) exit $rc with staging full: $(cat "$T/$mode.out")"
  assert_same_bytes "$DIRECT/$mode.dat" "$CAP/$mode.dat" "$mode.dat on its real path"
  grep -q "no space left in staging" "$CKPTFWD_LOG" || fail "the move to the real path is not logged"
  ok "$mode: every write returned in full with staging full; the file is exact"
done
