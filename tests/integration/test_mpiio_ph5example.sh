#!/usr/bin/env bash
# The HDF Group's parallel HDF5 example ph5example.c (Debian package
# libhdf5-doc, /usr/share/doc/libhdf5-doc/examples/ph5example.c[.gz]), built with
# h5pcc.mpich into the test's temp dir and run with mpiexec.mpich -n 4.
#   ph5example -c -f DIR       write ParaEg0.h5 (independent) and ParaEg1.h5 (collective),
#                              then read and verify them; -c: keep the files (by default it
#                              MPI_File_delete's them at the end)
#   ph5example -c -w -f DIR    no write: read and verify only (the restart)
# Its verification prints "N errors found in dataset_vrfy" (without counting them in the exit
# code) and "PHDF5 tests finished with no errors"; failed HDF5 calls assert (abort). Checks:
#   - under the library it passes its own verification and nothing lands on disk directly,
#   - the read-only run under the library (served by the forwarder/store) verifies,
#   - the restored files have the direct run's content: h5diff finds no difference (the
#     bytes may differ only where HDF5 stores object timestamps).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich h5pcc.mpich h5diff
SRC=$(dpkg -L libhdf5-doc 2>/dev/null | grep -E '/ph5example\.c(\.gz)?$' | head -1 || true)
[[ -n "$SRC" && -f "$SRC" ]] || skip "ph5example.c not found (apt install libhdf5-doc)"

PROG=$T/ph5example
if [[ "$SRC" == *.gz ]]; then zcat "$SRC" >"$T/ph5example.c"; else cp "$SRC" "$T/ph5example.c"; fi
# Built inside $T: h5pcc leaves its object file in the current directory.
(cd "$T" && h5pcc.mpich -shlib -o "$PROG" "$T/ph5example.c") >"$T/build.out" 2>&1 ||
  fail "h5pcc.mpich -shlib -o ph5example $SRC failed: $(tail -5 "$T/build.out")"

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
FILES=(ParaEg0.h5 ParaEg1.h5)

# verified LOG WHAT: ph5example's own verdict in LOG.
verified() {
  grep -q 'PHDF5 tests finished with no errors' "$1" ||
    fail "$2: ph5example did not report 'finished with no errors': $(grep -m3 -E 'error|Assert|abort' "$1" || tail -5 "$1")"
  ! grep -q 'errors found in dataset_vrfy' "$1" ||
    fail "$2: ph5example's verification found wrong values: $(grep -m3 'errors found' "$1")"
}

timeout 60 mpiexec.mpich -n 4 "$PROG" -c -f "$DIRECT" >"$T/direct.out" 2>&1 ||
  fail "direct run: mpiexec.mpich -n 4 ph5example -c -f $DIRECT exited non-zero: $(tail -5 "$T/direct.out")"
verified "$T/direct.out" "direct run"
for f in "${FILES[@]}"; do [[ -f "$DIRECT/$f" ]] || fail "direct run did not leave $DIRECT/$f"; done
ok "direct run wrote and verified ${FILES[*]}"

timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich -n 4 "$PROG" -c -f "$CAP" >"$T/write.out" 2>&1 ||
  fail "LD_PRELOAD=libckptfwd-mpich.so mpiexec.mpich -n 4 ph5example -c -f $CAP exited $?; expected 0: $(grep -m5 -E 'minor|ssert|bort' "$T/write.out" || tail -5 "$T/write.out")"
verified "$T/write.out" "write+read run under the library"
for f in "${FILES[@]}"; do [[ ! -f "$CAP/$f" ]] || fail "$CAP/$f is a regular file on disk: not captured"; done
ok "under the library: ph5example writes, reads and verifies; nothing on disk directly"

drain
STORE=$CAP/.ckptfwd
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify $STORE exited non-zero: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
for f in "${FILES[@]}"; do
  r=$(restored_file "$OUT" "$CAP/$f")
  [[ -n "$r" ]] || fail "restore did not produce $f: $(cd "$OUT" && find . -type f | tr '\n' ' ')"
  h5diff "$DIRECT/$f" "$r" >"$T/h5diff.$f.out" 2>&1 ||
    fail "h5diff $DIRECT/$f (direct) vs restored $r: $(head -8 "$T/h5diff.$f.out")"
done
n_out=$(find "$OUT" -type f | wc -l)
[[ $n_out -eq ${#FILES[@]} ]] || fail "restore wrote $n_out files, expected ${#FILES[*]}: $(cd "$OUT" && find . -type f | tr '\n' ' ')"
ok "restored ${FILES[*]}: h5diff finds no difference from the direct run"

timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich -n 4 "$PROG" -c -w -f "$CAP" >"$T/restart.out" 2>&1 ||
  fail "restart: LD_PRELOAD=libckptfwd-mpich.so mpiexec.mpich -n 4 ph5example -c -w -f $CAP exited $?: $(grep -m5 -E 'minor|ssert|bort' "$T/restart.out" || tail -5 "$T/restart.out")"
verified "$T/restart.out" "read-only run (restart) under the library"
ok "read-only ph5example under the library verifies the captured files (restart)"
