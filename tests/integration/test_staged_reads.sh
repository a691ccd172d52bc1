#!/usr/bin/env bash
# Files closed but not yet committed (CKPTFWD_BATCH_WINDOW_MS=60000, CKPTFWD_EXIT_WAIT=0, so
# the writer exits with nothing on the store) are served from staging: a restarting process
# reading through the library (read, pread, fread, mmap, stat, readdir) sees exactly the
# direct run's bytes and names; reopening a staged version with O_APPEND and renaming one
# build on the staged bytes; after `ckptfwd drain` the restore equals the direct run.
# While staged, the session directory is 0700 and the socket and staged files 0600.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich

ckf_std_dirs
export CKPTFWD_BATCH_WINDOW_MS=60000 CKPTFWD_EXIT_WAIT=0

timeout 120 mpiexec.mpich -n 4 "$WRITER" write "$DIRECT" --no-fsync >/dev/null || fail "direct run failed"
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
  mpiexec.mpich -n 4 "$WRITER" write "$CAP" --no-fsync >"$T/write.out" 2>&1 ||
  fail "ckpt_writer under the library failed: $(tail -5 "$T/write.out")"
[[ $(count_containers "$STORE") -eq 0 ]] || fail "a container exists already (batch window 60 s, no exit-wait): the reads below would not come from staging"
ok "32 files closed, none committed"

# Other users on the node must not reach staged data (docs/semantics.md, "Other users on the node").
sess=$(find "$CKPTFWD_STAGE_DIR" -mindepth 1 -maxdepth 1 -type d -name 'ckptfwd-*')
[[ -n "$sess" ]] || fail "no session directory under $CKPTFWD_STAGE_DIR"
[[ $(stat -c %a "$sess") == 700 ]] || fail "session directory $sess has mode $(stat -c %a "$sess"), want 700"
[[ -S "$sess/sock" && $(stat -c %a "$sess/sock") == 600 ]] || fail "control socket $sess/sock missing or mode $(stat -c %a "$sess/sock" 2>/dev/null), want 600"
bad=$(find "$sess" -name 'v*.data' ! -perm 600 | head -3)
[[ -z "$bad" ]] || fail "staged files not mode 600: $bad"
[[ $(find "$sess" -name 'v*.data' | wc -l) -ge 32 ]] || fail "fewer than 32 staged versions in $sess"
ok "session dir 0700, socket and staged files 0600"

"$WRITER" read "$DIRECT" --ranks 4 >"$T/digest.direct"
with_lib "$WRITER" read "$CAP" --ranks 4 >"$T/digest.lib" 2>"$T/digest.err" ||
  fail "read-back of staged versions failed: $(tail -5 "$T/digest.err")"
diff "$T/digest.direct" "$T/digest.lib" >"$T/digest.diff" || fail "staged read-back digests differ: $(head -10 "$T/digest.diff")"
"$WRITER" list "$DIRECT" >"$T/list.direct"
with_lib "$WRITER" list "$CAP" >"$T/list.lib" 2>&1 || fail "readdir of staged files failed: $(cat "$T/list.lib")"
diff "$T/list.direct" "$T/list.lib" >/dev/null || fail "readdir under the library differs while staged: $(diff "$T/list.direct" "$T/list.lib" | head -10)"
(cd "$DIRECT" && stat -c '%n %s' -- *) >"$T/stat.direct"
mapfile -t names <"$T/list.direct"
(cd "$CAP" && with_lib stat -c '%n %s' -- "${names[@]}") >"$T/stat.lib" 2>&1 || fail "stat of staged files failed: $(tail -5 "$T/stat.lib")"
diff "$T/stat.direct" "$T/stat.lib" >/dev/null || fail "stat sizes differ while staged: $(diff "$T/stat.direct" "$T/stat.lib" | head -10)"
ok "read/pread/fread/mmap, readdir and stat of staged versions match the direct run"

for d in "$DIRECT" "$CAP"; do
  run=(); [[ $d == "$CAP" ]] && run=(with_lib)
  "${run[@]}" bash -c 'printf "appended after close\n" >> "$1/append_r2.log" && mv "$1/posix_r3.bin" "$1/moved_r3.bin"' _ "$d" ||
    fail "append/rename in $d failed"
done
"$WRITER" read "$DIRECT" --rank 2 | grep append >"$T/append.direct"
with_lib "$WRITER" read "$CAP" --rank 2 | grep append >"$T/append.lib"
diff "$T/append.direct" "$T/append.lib" >/dev/null || fail "O_APPEND onto a staged version: $(cat "$T/append.lib") vs direct $(cat "$T/append.direct")"
with_lib cmp "$CAP/moved_r3.bin" "$DIRECT/moved_r3.bin" || fail "renamed staged file differs"
if with_lib test -e "$CAP/posix_r3.bin"; then fail "posix_r3.bin still exists after mv"; fi
ok "O_APPEND reopen and rename of staged versions"

drain
[[ $(count_containers "$STORE") -ge 1 ]] || fail "drain committed nothing"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "after drain, restore equals the direct run"
