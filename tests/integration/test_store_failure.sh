#!/usr/bin/env bash
# The store cannot be written (docs/what-survives-what.md: the store write fails): once the
# forwarder has started (a store that cannot be created at its start is a bad setting, which
# keeps it from starting), CKPTFWD_STORE is replaced by a regular file, so committing into it
# fails (a permission trick would not work: tests may run as root). Then:
#   - fsync() on a captured file returns EIO (never success), within a bounded time;
#   - a process that exits with uncommitted files reports it (log), and its bytes stay
#     staged and readable through the library;
#   - once the store is fixed, a drain commits everything (the forwarder keeps retrying;
#     if it has gone, a new one recovers the staged versions) and restore is byte-identical.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
# The exit wait asks a refusing store again for CKPTFWD_EXIT_RETRY_S (60 s by default).
export CKPTFWD_EXIT_RETRY_S=2

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
export CKPTFWD_STORE=$T/store CKPTFWD_IDLE_EXIT=60
STORE=$CKPTFWD_STORE
timeout 60 "$FWD" --daemon || fail "ckptfwd-forwarder --daemon failed"
# Broken under the running forwarder (the store holds nothing yet but the job's group
# rendezvous directory, src/forwarder/group/rendezvous.h).
rm -r "$STORE" && touch "$STORE"

"$WRITER" fsync-check "$DIRECT/synced.bin" "$T/none" >/dev/null 2>&1 || true  # oracle bytes only
"$WRITER" big "$DIRECT/later.bin" 300K

set +e
start=$SECONDS
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$WRITER" fsync-check "$CAP/synced.bin" "$STORE" >"$T/fsync.out" 2>&1
rc=$?
set -e
[[ $rc -ne 124 ]] || fail "fsync did not return within 120 s while the store is broken"
[[ $rc -ne 0 ]] || fail "fsync reported success although the store cannot be written: $(cat "$T/fsync.out")"
grep -q 'fsync .*Input/output error' "$T/fsync.out" || fail "fsync did not fail with EIO: $(cat "$T/fsync.out")"
ok "fsync returned EIO after $((SECONDS - start)) s"

rc=0
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$WRITER" big "$CAP/later.bin" 300K >"$T/later.out" 2>&1 || rc=$?
[[ $rc -eq 75 ]] || fail "the writer whose files are not committed exited $rc, not 75"
grep -qiE 'not committed|Input/output error' "$CKPTFWD_LOG" || fail "nothing in $CKPTFWD_LOG says the files are not committed"
[[ $(find "$CKPTFWD_STAGE_DIR" -name 'v*.data' | wc -l) -ge 2 ]] || fail "the uncommitted versions are not kept in staging"
for f in synced.bin later.bin; do
  with_lib cmp "$CAP/$f" "$DIRECT/$f" 2>"$T/cmp.err" || fail "$f through the library while the store is broken: $(cat "$T/cmp.err")"
done
ok "uncommitted files are reported, kept staged and readable through the library"

rm "$STORE"
if [[ -z "$(session_forwarders)" ]]; then
  echo "note: the forwarder had exited with versions pending; starting one to recover them"
  timeout 60 "$FWD" --daemon >"$T/fwd.out" 2>&1 || fail "ckptfwd-forwarder --daemon failed: $(tail -5 "$T/fwd.out")"
fi
drain
[[ $(count_containers "$STORE") -ge 1 ]] || fail "nothing was committed after the store was fixed"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "after the store was fixed, drain committed everything and restore is byte-identical"
