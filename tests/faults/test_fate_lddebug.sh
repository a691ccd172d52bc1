#!/usr/bin/env bash
# The loader's debug output switched on in the job (LD_DEBUG=bindings,
# LD_DEBUG_OUTPUT=<file>) reaches the forwarder the library starts: the loader holds a
# descriptor (3, above the standard streams) for its output there. The forwarder must not
# take that descriptor over (its readiness pipe, MANIFEST and containers get numbers of
# their own), so: no rank falls back, the shared MPI-IO files of 2 MPICH ranks are exact,
# `ckptfwd verify` is clean and the loader's lines stay in the loader's files.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
MW=$BUILD/bin/mpiio_writer
[[ -x "$MW" ]] || skip "mpiio_writer not built (apt install libmpich-dev)"
[[ -e "$LIB_MPICH" ]] || skip "libckptfwd-mpich.so not built"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs

timeout 60 mpiexec.mpich -n 2 "$MW" write "$DIRECT" >"$T/direct.out" 2>&1 ||
  fail "direct run of mpiio_writer failed: $(tail -5 "$T/direct.out")"

mkdir -p "$T/lddebug"
timeout 120 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" LD_DEBUG=bindings \
  LD_DEBUG_OUTPUT="$T/lddebug/out" mpiexec.mpich -n 2 "$MW" write "$CAP" >"$T/cap.out" 2>&1 ||
  fail "mpiio_writer under the library with LD_DEBUG failed: $(tail -5 "$T/cap.out")"
compgen -G "$T/lddebug/out.*" >/dev/null || fail "LD_DEBUG_OUTPUT wrote nothing: the test did not arm"
if grep -q "directly" "$CKPTFWD_LOG" 2>/dev/null; then
  fail "a process fell back to direct writes: $(grep directly "$CKPTFWD_LOG")"
fi
drain
assert_verify_clean
"$CLI" restore "$STORE" --to "$OUT" >"$T/restore.out" 2>&1 || fail "restore: $(tail -3 "$T/restore.out")"
n=0
while IFS= read -r -d '' f; do
  rel=${f#"$DIRECT"/}
  got=$(restored_file "$OUT" "$CAP/$rel")
  if [[ ! -e "$got" && -f "$CAP/$rel" ]]; then got=$CAP/$rel; fi
  assert_same_bytes "$f" "$got" "$rel"
  n=$((n + 1))
done < <(find "$DIRECT" -type f -print0)
[[ $n -gt 0 ]] || fail "the direct run wrote no files"
# No container or MANIFEST line holds a loader line (verify already checks checksums).
if grep -rqa "binding file" "$STORE"; then fail "loader output inside the store"; fi
ok "2 MPICH ranks with LD_DEBUG=bindings: $n files exact, verify clean, no fallback"
