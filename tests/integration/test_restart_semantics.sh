#!/usr/bin/env bash
# The file semantics a restarting application relies on (docs/semantics.md), each
# done by real tools (bash redirections, mv, rm, dd, truncate, stat) both under the library
# and, as the oracle, without it:
#   - fsync returns only after commit: checked inside the writing process right after
#     fsync() returns (the store's MANIFEST names the file and a container exists);
#   - exit-wait: when a process exits, its files are already committed, without a drain
#     (checked with a 1.5 s batch window, so a process that did not wait would lose the race);
#   - rename (including over an existing file) and unlink act on the catalog, for staged
#     and for committed files; the old names are gone under the library and in a restore;
#   - O_APPEND, O_WRONLY without O_TRUNC (dd conv=notrunc) and truncate() reopen a committed
#     file as a new version starting from its old bytes;
#   - stat sizes and contents seen through the library match the direct run, and
#     `ckptfwd restore` gives exactly the direct run's files.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

ckf_std_dirs

# both 'bash code using $D': runs it without the library on $DIRECT, then under it on $CAP.
both() {
  D=$DIRECT bash -c "$1" || fail "without the library: '$1' failed"
  with_lib env D="$CAP" bash -c "$1" 2>"$T/both.err" || fail "under the library: '$1' failed: $(tail -5 "$T/both.err")"
}
# seen NAME: "size content-sha" of NAME through the library must equal the direct file's.
seen() {
  local want got
  want="$(stat -c %s "$DIRECT/$1") $(sha "$DIRECT/$1")"
  got="$(with_lib stat -c %s "$CAP/$1" 2>&1) $(with_lib sha256sum "$CAP/$1" 2>&1 | cut -d' ' -f1)"
  [[ "$want" == "$got" ]] || fail "$1 through the library: size/sha '$got', direct run: '$want'"
}
# gone NAME: NAME does not exist through the library (test -e uses stat/access).
gone() {
  if with_lib test -e "$CAP/$1"; then fail "$CAP/$1 still exists through the library"; fi
  if with_lib ls "$CAP" | grep -qx "$1"; then fail "ls through the library still lists $1"; fi
}

# 1. fsync: committed when it returns (asserted inside the process, before close and exit).
with_lib "$WRITER" fsync-check "$CAP/synced.bin" "$STORE" >"$T/fsync.out" 2>&1 ||
  fail "after fsync() returned, the store did not hold the file: $(cat "$T/fsync.out")"
"$WRITER" fsync-check "$DIRECT/synced.bin" "$T/nostore" >/dev/null 2>&1 || true  # oracle bytes only
seen synced.bin
ok "fsync returned after commit: $(cat "$T/fsync.out")"

# 2. exit-wait, with a forwarder started fresh with a 1.5 s batch window.
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle (CKPTFWD_IDLE_EXIT=2)"
export CKPTFWD_BATCH_WINDOW_MS=1500
"$WRITER" big "$DIRECT/exitwait.bin" 200K
with_lib "$WRITER" big "$CAP/exitwait.bin" 200K 2>"$T/ew.err" || fail "writer failed: $(cat "$T/ew.err")"
grep -qF "$CAP/exitwait.bin" "$STORE/MANIFEST" 2>/dev/null ||
  fail "the process exited before its file was committed: $STORE/MANIFEST does not name $CAP/exitwait.bin"
ok "at process exit the file was already committed (no drain)"
unset CKPTFWD_BATCH_WINDOW_MS

# 3. rename: tmp-then-rename, then again over the existing name.
both 'printf generation-1 > "$D/state.tmp" && mv "$D/state.tmp" "$D/state"'
gone state.tmp
seen state
both 'printf generation-two > "$D/state.tmp" && mv -f "$D/state.tmp" "$D/state"'
gone state.tmp
seen state
[[ "$(with_lib cat "$CAP/state")" == "generation-two" ]] || fail "after the second rename state reads '$(with_lib cat "$CAP/state")'"
# rename of a committed file.
both 'printf committed > "$D/old_name"'
drain
both 'mv "$D/old_name" "$D/new_name"'
gone old_name
seen new_name
ok "rename acts on staged and committed files"

# 4. unlink: staged and committed.
both 'printf doomed > "$D/doomed1"; rm "$D/doomed1"'
gone doomed1
both 'printf doomed > "$D/doomed2"'
drain
both 'rm "$D/doomed2"'
gone doomed2
ok "unlink removes staged and committed files"

# 5. reopen a committed file as a new version from its old bytes.
both 'printf "hello " > "$D/log"'
drain
both 'printf world >> "$D/log"'
seen log
[[ "$(with_lib cat "$CAP/log")" == "hello world" ]] || fail "O_APPEND after commit: log reads '$(with_lib cat "$CAP/log")'"
drain
both 'printf J | dd of="$D/log" conv=notrunc status=none'
seen log
both 'truncate -s 5 "$D/log"'
seen log
[[ "$(with_lib cat "$CAP/log")" == "Jello" ]] || fail "after dd conv=notrunc and truncate -s 5, log reads '$(with_lib cat "$CAP/log")'"
both 'truncate -s 100000 "$D/log"'
seen log
ok "O_APPEND, notrunc overwrite and truncate() start new versions from committed bytes"

# 6. The store after all of it: exactly the direct run's files.
drain
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify failed: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "restore gives exactly the direct run's $(ls "$DIRECT" | wc -l) files (no renamed-away or unlinked names)"
