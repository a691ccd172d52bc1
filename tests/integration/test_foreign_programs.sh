#!/usr/bin/env bash
# Programs that know nothing about ckptfwd run unharmed under the library with capture on:
# coreutils (ls, cp, cat, sha256sum), python3, a program linked with no MPI (ckpt_writer),
# and a program linked with Open MPI (the project itself builds against MPICH), as a
# singleton and under mpirun.openmpi -n 2. Each must exit 0 with the right output, and
# what they wrote to captured paths must restore identically. The library itself must not
# define MPI symbols or link an MPI library (it would pre-empt the application's own MPI).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"

# 1. The library's own symbol table and dependencies.
nm -D --defined-only "$LIB" >"$T/nm.out" || fail "nm -D $LIB failed"
if grep -E ' (P?MPI_|MPIX_)' "$T/nm.out" >"$T/mpi.syms"; then
  fail "libckptfwd.so defines MPI symbols (they would pre-empt the application's MPI): $(head -5 "$T/mpi.syms" | tr '\n' ' ')"
fi
if readelf -d "$LIB" | grep -E 'NEEDED.*(libmpi|libhdf5|libzstd|libz\.)' >"$T/needed"; then
  fail "libckptfwd.so links libraries an application may carry its own copy of: $(cat "$T/needed")"
fi
ok "libckptfwd.so exports no MPI_/PMPI_ symbols and needs no MPI/HDF5/zstd/zlib library"

# 2. coreutils: cp into a captured path, then cat/sha256sum/ls/stat through the library.
"$WRITER" big "$T/source.bin" 300K
cp "$T/source.bin" "$DIRECT/copied.bin"
with_lib cp "$T/source.bin" "$CAP/copied.bin" 2>"$T/cp.err" || fail "cp under the library failed: $(cat "$T/cp.err")"
with_lib sha256sum "$CAP/copied.bin" >"$T/cp.sha" 2>&1 || fail "sha256sum under the library failed: $(cat "$T/cp.sha")"
[[ "$(cut -d' ' -f1 "$T/cp.sha")" == "$(sha "$T/source.bin")" ]] || fail "cp'd file read through the library differs from its source"
with_lib cat "$CAP/copied.bin" | cmp - "$T/source.bin" || fail "cat of the cp'd file through the library differs"
with_lib ls "$CAP" >"$T/ls.out" 2>&1 || fail "ls $CAP under the library failed: $(cat "$T/ls.out")"
grep -qx 'copied.bin' "$T/ls.out" || fail "ls under the library does not list copied.bin: $(cat "$T/ls.out")"
ok "cp, sha256sum, cat and ls work on captured paths"

# 3. python3 (its own open/write/close path), printing to stdout.
PY='import sys
with open(sys.argv[1] + "/py.txt", "w") as f:
    for i in range(2000): f.write(f"{i} {i*i}\n")
print(open(sys.argv[1] + "/py.txt").read().count("\n"))'
/usr/bin/python3 -c "$PY" "$DIRECT" >/dev/null
out=$(with_lib /usr/bin/python3 -c "$PY" "$CAP" 2>"$T/py.err") || fail "python3 under the library failed: $(cat "$T/py.err")"
[[ "$out" == "2000" ]] || fail "python3 under the library printed '$out', want 2000"
ok "python3 writes and re-reads a captured file"

# 3b. dash (ends with _exit after a fork) and tar (openat, fchmod, utimensat on its output)
# writing captured files; the extracted files read back through the library.
if command -v dash >/dev/null; then
  dash -c 'i=0; while [ $i -lt 500 ]; do echo "line $i"; i=$((i+1)); done > "$1/dash.txt"' _ "$DIRECT"
  with_lib dash -c 'i=0; while [ $i -lt 500 ]; do echo "line $i"; i=$((i+1)); done > "$1/dash.txt"' _ "$CAP" 2>"$T/dash.err" ||
    fail "dash under the library failed: $(cat "$T/dash.err")"
fi
mkdir -p "$T/tarsrc"
"$WRITER" big "$T/tarsrc/t1.bin" 100K
printf 'small\n' >"$T/tarsrc/t2.txt"
tar -C "$T/tarsrc" -cf "$T/in.tar" t1.bin t2.txt
tar -C "$DIRECT" -xf "$T/in.tar"
with_lib tar -C "$CAP" -xf "$T/in.tar" 2>"$T/tar.err" || fail "tar -x into the captured directory failed: $(cat "$T/tar.err")"
for f in t1.bin t2.txt; do
  with_lib cmp "$CAP/$f" "$T/tarsrc/$f" || fail "$f extracted by tar reads back wrong through the library"
done
with_lib tar -C "$CAP" -cf "$T/out.tar" t1.bin t2.txt 2>"$T/tar.err" || fail "tar -c of captured files failed: $(cat "$T/tar.err")"
tar -xOf "$T/out.tar" t1.bin | cmp - "$T/tarsrc/t1.bin" || fail "tar -c through the library archived wrong bytes"
ok "dash and tar write and read captured files"

# 4. A program linked with no MPI, run without a launcher (the library's rank: the pid).
"$WRITER" write "$DIRECT" --rank 7 >/dev/null
with_lib "$WRITER" write "$CAP" --rank 7 >"$T/nompi.out" 2>&1 || fail "ckpt_writer (no MPI) under the library failed: $(cat "$T/nompi.out")"
grep -q 'rank 7 wrote 8 files' "$T/nompi.out" || fail "ckpt_writer printed: $(cat "$T/nompi.out")"
ok "a program linked with no MPI runs unharmed"

# 5. Open MPI: singleton, then two ranks under mpirun.openmpi.
if [[ -x "$OMPI_HELLO" ]] && command -v mpirun.openmpi >/dev/null; then
  timeout 120 mpirun.openmpi -n 2 --oversubscribe "$OMPI_HELLO" "$DIRECT" >/dev/null 2>&1 || fail "ompi_hello without the library failed"
  with_lib timeout 120 "$OMPI_HELLO" "$T" >"$T/ompi1.out" 2>&1 || fail "ompi_hello singleton under the library failed: $(tail -5 "$T/ompi1.out")"
  grep -q '1 ranks wrote' "$T/ompi1.out" || fail "ompi_hello singleton printed: $(cat "$T/ompi1.out")"
  [[ -f "$T/ompi_r0.txt" ]] || fail "the singleton's uncaptured $T/ompi_r0.txt is not a regular file (pass-through broken)"
  with_lib timeout 120 mpirun.openmpi -n 2 --oversubscribe "$OMPI_HELLO" "$CAP" >"$T/ompi2.out" 2>&1 ||
    fail "mpirun.openmpi -n 2 ompi_hello under the library failed: $(tail -5 "$T/ompi2.out")"
  grep -q '2 ranks wrote' "$T/ompi2.out" || fail "ompi_hello printed: $(cat "$T/ompi2.out")"
  [[ ! -f "$CAP/ompi_r1.txt" ]] || fail "$CAP/ompi_r1.txt is a regular file on disk: not captured"
  ok "an Open MPI program runs as a singleton and with 2 ranks under the library"
else
  echo "note: ompi_hello or mpirun.openmpi missing (install libopenmpi-dev): Open MPI part not run"
fi

# Everything written to captured paths restores identically.
drain
restore_store "$CAP/.ckptfwd" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "files written by cp, python3, ckpt_writer and ompi_hello restore sha256-identical"
