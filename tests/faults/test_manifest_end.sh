#!/usr/bin/env bash
# The MANIFEST's end (store/manifest/manifest_end.h): a store of three files in three containers
# loses the last record of its MANIFEST at a line boundary (sed -i '$d'), once with its
# MANIFEST.tail kept and once with it deleted too. Each time:
#   - `ckptfwd verify` exits 1 saying records were cut off, naming the last file;
#   - `ckptfwd restore` exits 1 naming that file, and restores the two others exactly;
#   - a read of that file through the library fails with EIO (not ENOENT: the store says
#     it existed), and the forwarder's log says why at its first read.
# Not a false alarm: a container left by a writer that stopped before its record (still
# writable) stays a warning, and verify and restore exit 0.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
ckf_std_dirs

for i in 0 1 2; do
  "$WRITER" big "$DIRECT/r$i.bin" 150K --rank "$i"
  with_lib "$WRITER" big "$CAP/r$i.bin" 150K --rank "$i" || fail "writing r$i.bin under the library failed"
  drain # one container and one record per file
done
[[ $(count_containers "$STORE") -eq 3 ]] || fail "expected 3 containers: $(ls "$STORE")"
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"
cp -a "$STORE" "$T/pristine"
last=$(tail -n 1 "$STORE/MANIFEST" | cut -f2)
[[ $last == *.ckc ]] || fail "the last record names no container: $(tail -c 200 "$STORE/MANIFEST")"

pristine() {
  wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"
  rm -rf "$STORE" "$OUT"
  cp -a "$T/pristine" "$STORE"
  mkdir -p "$OUT"
}

# run_cli NAME CMD...: runs the CLI into $T/NAME.out, sets rc.
run_cli() {
  local name=$1
  shift
  set +e
  timeout 60 "$CLI" "$@" </dev/null >"$T/$name.out" 2>&1
  rc=$?
  set -e
}

# expect_cut NAME: verify, restore and a read through the library all tell the lost record.
expect_cut() {
  local name=$1 f r
  run_cli "verify-$name" verify "$STORE"
  [[ $rc -eq 1 ]] || fail "$name: verify exited $rc (want 1): $(cat "$T/verify-$name.out")"
  grep -q "cut off the end" "$T/verify-$name.out" || fail "$name: verify does not say records were cut off: $(cat "$T/verify-$name.out")"
  grep -q "r2.bin" "$T/verify-$name.out" || fail "$name: verify does not name r2.bin: $(cat "$T/verify-$name.out")"
  run_cli "restore-$name" restore "$STORE" --to "$OUT"
  [[ $rc -eq 1 ]] || fail "$name: restore exited $rc (want 1): $(cat "$T/restore-$name.out")"
  grep -q "r2.bin" "$T/restore-$name.out" || fail "$name: restore does not name r2.bin: $(cat "$T/restore-$name.out")"
  for f in r0 r1; do
    r=$(restored_file "$OUT" "$CAP/$f.bin")
    [[ -n "$r" ]] || fail "$name: $f.bin was not restored: $(cat "$T/restore-$name.out")"
    assert_same_bytes "$DIRECT/$f.bin" "$r" "$name: restored $f.bin"
  done
  : >"$CKPTFWD_LOG"
  if with_lib cat "$CAP/r2.bin" >/dev/null 2>"$T/cat-$name.err"; then
    fail "$name: the library read r2.bin without an error"
  fi
  grep -q "Input/output error" "$T/cat-$name.err" || fail "$name: reading r2.bin did not fail with EIO: $(cat "$T/cat-$name.err")"
  grep -q "cut off the end" "$CKPTFWD_LOG" || fail "$name: the log does not say records were cut off: $(cat "$CKPTFWD_LOG")"
  grep "r2.bin" "$CKPTFWD_LOG" | grep -q "$last" || fail "$name: no log line names r2.bin and $last: $(cat "$CKPTFWD_LOG")"
  with_lib cmp "$DIRECT/r0.bin" "$CAP/r0.bin" || fail "$name: r0.bin does not read back through the library"
}

# 1. The last record cut off; MANIFEST.tail kept.
pristine
sed -i '$d' "$STORE/MANIFEST"
expect_cut tail-kept
ok "last record cut, tail kept: verify and restore exit 1 naming r2.bin, the library gives EIO and logs it"

# 2. The last record cut off and MANIFEST.tail deleted.
pristine
sed -i '$d' "$STORE/MANIFEST"
rm -f "$STORE/MANIFEST.tail"
expect_cut tail-deleted
ok "last record cut, tail deleted: the read-only container of the lost record tells it"

# 3. A writer that stopped between its container's rename and its record leaves a
# container no record names, still writable: a warning, nothing lost.
pristine
cp "$STORE/$last" "$STORE/c-leftover-1-0.ckc"
chmod u+w "$STORE/c-leftover-1-0.ckc"
run_cli verify-leftover verify "$STORE"
[[ $rc -eq 0 ]] || fail "leftover: verify exited $rc: $(cat "$T/verify-leftover.out")"
grep -q "warning: .*c-leftover-1-0.ckc" "$T/verify-leftover.out" || fail "leftover: no warning names it: $(cat "$T/verify-leftover.out")"
run_cli restore-leftover restore "$STORE" --to "$OUT"
[[ $rc -eq 0 ]] || fail "leftover: restore exited $rc: $(cat "$T/restore-leftover.out")"
with_lib cmp "$DIRECT/r2.bin" "$CAP/r2.bin" || fail "leftover: r2.bin does not read back through the library"
ok "a writable container no record names (a stopped writer's leftover) stays a warning"
