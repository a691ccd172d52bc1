#!/usr/bin/env bash
# Store integrity (docs/what-survives-what.md): a real store of four containers, each written by its
# own run of the library, is damaged the ways an accident or a careless hand can damage it,
# and each time `ckptfwd verify` exits 1 naming what is wrong, `ckptfwd restore` exits
# non-zero naming every file it cannot give back (and still restores the others), and
# nothing hands back another file's bytes:
#   two containers swapped on disk (each under the other's name),
#   MANIFEST truncated to zero while the containers remain,
#   a middle MANIFEST line deleted, two lines reordered (the record chain, manifest.h),
#   a line corrupted (the files it named are named by restore).
# Each scenario starts from a pristine copy of the store, with no forwarder running.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"

ckf_std_dirs
files=(r0 r1 r2 r3)
for i in 0 1 2 3; do
  "$WRITER" big "$DIRECT/r$i.bin" 200K --rank "$i"
  with_lib "$WRITER" big "$CAP/r$i.bin" 200K --rank "$i" || fail "writing r$i.bin under the library failed"
  drain  # one batch, one container, one commit record per file
done
[[ $(count_containers "$STORE") -eq 4 ]] || fail "expected 4 containers: $(ls "$STORE")"
timeout 60 "$CLI" verify "$STORE" >"$T/verify0.out" 2>&1 || fail "verify failed on the intact store: $(tail -5 "$T/verify0.out")"
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"
cp -a "$STORE" "$T/pristine"
# container of each file, from the commit or create records (verb, container, n, path, ...)
declare -A cont
while IFS=$'\t' read -r verb c _ path _; do
  [[ $verb == commit || $verb == create ]] && cont[$(basename "$path" .bin)]=$c
done <"$STORE/MANIFEST"
[[ ${#cont[@]} -eq 4 ]] || fail "expected 4 commit records: $(cut -c1-60 "$STORE/MANIFEST")"
ok "4 files in 4 containers, verify clean"

pristine() {
  wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"
  rm -rf "$STORE" "$OUT"
  cp -a "$T/pristine" "$STORE"
  mkdir -p "$OUT"
}

# expect_verify_fails NAME PATTERN...: verify exits 1 and its output matches each pattern.
expect_verify_fails() {
  local name=$1 rc p
  shift
  set +e
  timeout 60 "$CLI" verify "$STORE" >"$T/verify-$name.out" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 1 ]] || fail "$name: verify exited $rc (want 1): $(tail -5 "$T/verify-$name.out")"
  for p in "$@"; do
    grep -q -- "$p" "$T/verify-$name.out" || fail "$name: verify does not say '$p': $(cat "$T/verify-$name.out")"
  done
}

# expect_restore_fails NAME "BAD FILES" "GOOD FILES": restore exits non-zero, names each bad
# file, gives none of them back with wrong bytes, and restores each good file identically.
expect_restore_fails() {
  local name=$1 bad=$2 good=$3 rc f r
  set +e
  timeout 60 "$CLI" restore "$STORE" --to "$OUT" </dev/null >"$T/restore-$name.out" 2>&1
  rc=$?
  set -e
  [[ $rc -ne 0 ]] || fail "$name: restore exited 0: $(cat "$T/restore-$name.out")"
  for f in $bad; do
    grep -q "$f.bin" "$T/restore-$name.out" || fail "$name: restore does not name $f.bin: $(cat "$T/restore-$name.out")"
    r=$(restored_file "$OUT" "$CAP/$f.bin")
    [[ -z "$r" || "$(sha "$r")" == "$(sha "$DIRECT/$f.bin")" ]] ||
      fail "$name: restore wrote $f.bin with other bytes"
  done
  for f in $good; do
    r=$(restored_file "$OUT" "$CAP/$f.bin")
    [[ -n "$r" ]] || fail "$name: $f.bin was not restored: $(cat "$T/restore-$name.out")"
    assert_same_bytes "$DIRECT/$f.bin" "$r" "$name: restored $f.bin"
  done
}

# 1. Containers of r0 and r1 swapped on disk.
pristine
a=${cont[r0]} b=${cont[r1]}
mv "$STORE/$a" "$STORE/swap.tmp" && mv "$STORE/$b" "$STORE/$a" && mv "$STORE/swap.tmp" "$STORE/$b"
expect_verify_fails swap "$a" "$b" "not the container the MANIFEST records"
expect_restore_fails swap "r0 r1" "r2 r3"
# Through the library: an error or r0's own bytes, never r1's.
if with_lib cat "$CAP/r0.bin" >"$T/lib-r0" 2>"$T/lib-r0.err"; then
  cmp -s "$T/lib-r0" "$DIRECT/r0.bin" || fail "swap: the library served other bytes for r0.bin"
  fail "swap: the library served r0.bin from a swapped container without an error"
fi
grep -q "not the container the MANIFEST recorded" "$CKPTFWD_LOG" ||
  fail "swap: the forwarder log does not say why r0.bin cannot be read: $(tail -5 "$CKPTFWD_LOG")"
ok "swapped containers: verify names $a and $b, restore fails for r0 and r1 only, the library refuses"

# 2. MANIFEST truncated to zero: every container is unreferenced.
pristine
: >"$STORE/MANIFEST"
expect_verify_fails truncated "${cont[r0]}" "${cont[r1]}" "${cont[r2]}" "${cont[r3]}" "no MANIFEST record names"
set +e
timeout 60 "$CLI" restore "$STORE" --to "$OUT" </dev/null >"$T/restore-truncated.out" 2>&1
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "truncated: restore exited 0 with 4 unreferenced containers"
grep -q "${cont[r2]}" "$T/restore-truncated.out" || fail "truncated: restore does not name the containers: $(cat "$T/restore-truncated.out")"
rm "$STORE/MANIFEST"
expect_verify_fails missing "${cont[r3]}" "MANIFEST is missing"
ok "MANIFEST emptied or removed: verify and restore exit 1 naming the 4 unreferenced containers"

# 3. The second of four lines deleted.
pristine
sed -i '2d' "$STORE/MANIFEST"
expect_verify_fails deleted "MANIFEST:2: chain broken"
ok "deleted middle line: $(grep -m1 chain "$T/verify-deleted.out")"

# 4. Lines 2 and 3 swapped.
pristine
sed -i '2{h;d};3{G}' "$STORE/MANIFEST"
expect_verify_fails reordered "chain broken"
ok "reordered lines: $(grep -m1 chain "$T/verify-reordered.out")"

# 5. One digit of the third record's mtime changed: r2's record is skipped.
pristine
/usr/bin/python3 - "$STORE/MANIFEST" <<'PY' || fail "could not corrupt line 3"
import sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")
f = lines[2].split(b"\t")
f[7] = f[7][:-1] + bytes([ord("0") + (f[7][-1] - ord("0") + 1) % 10])
lines[2] = b"\t".join(f)
open(p, "wb").write(b"\n".join(lines))
PY
expect_verify_fails corrupt "MANIFEST:3: checksum mismatch"
expect_restore_fails corrupt "r2" "r0 r1 r3"
ok "corrupt line: restore exits non-zero naming r2.bin, restores the other three"

# 6. The last record cut off at a line boundary: the chain of what is left is sound; the
# MANIFEST's tail (its size and last checksum after the latest append) tells.
pristine
head -n 3 "$STORE/MANIFEST" >"$T/m3" && cat "$T/m3" >"$STORE/MANIFEST"
expect_verify_fails truncated "records were cut off its end"
ok "MANIFEST cut at a record boundary: verify names it"
