#!/usr/bin/env bash
# The capture spine, against the oracle (a run without the library).
#
# 4 MPICH ranks of ckpt_writer write 32 files with every write path (write, pwrite at
# scattered offsets, writev/pwritev, fwrite, std::ofstream, O_APPEND across opens,
# ftruncate holes, write-tmp-then-rename, writes through a dup'd fd). --no-fsync: the Must-show
# mix has no fsync (each fsync may force its own commit; test_restart_semantics.sh covers
# fsync), so the store's file count measures batching. Under the library:
#   - the captured paths are not regular files in their directory (seen without the library),
#   - the store holds at least 4x fewer files than were captured,
#   - `ckptfwd verify` is clean and `ckptfwd ls` names every file,
#   - `ckptfwd restore` gives sha256-identical files, and nothing else,
#   - read-back under the library (read, pread, fread, mmap, stat) gives the direct run's
#     digests, and readdir under the library lists the same names.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP"
CAPTURE="$CAP/*"

timeout 120 mpiexec.mpich -n 4 "$WRITER" write "$DIRECT" --no-fsync >/dev/null || fail "direct run of ckpt_writer failed"
n_files=$(find "$DIRECT" -type f | wc -l)
[[ $n_files -ge 16 ]] || fail "direct run wrote only $n_files files (want >= 16)"

timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
  mpiexec.mpich -n 4 "$WRITER" write "$CAP" --no-fsync >"$T/write.out" 2>&1 ||
  fail "ckpt_writer under the library exited non-zero: $(tail -5 "$T/write.out")"
ok "4 ranks wrote $n_files files under the library"

# Without the library the captured names must not be regular files on disk.
for f in "$DIRECT"/*; do
  name=$(basename "$f")
  [[ ! -f "$CAP/$name" ]] || fail "$CAP/$name is a regular file on disk: it was not captured"
done
[[ ! -e "$CAP/ckpt_r0.bin.tmp" ]] || fail "$CAP/ckpt_r0.bin.tmp exists on disk"
ok "no captured path is a regular file in $CAP"

# Exit-wait put everything on the store already; drain anyway so the counts are final.
drain
STORE=$CAP/.ckptfwd
[[ -d "$STORE" ]] || fail "store $STORE does not exist"
n_store=$(find "$STORE" -type f | wc -l)
n_cont=$(count_containers "$STORE")
[[ $n_cont -ge 1 ]] || fail "store $STORE has no *.ckc container: $(ls -la "$STORE")"
[[ $((n_store * 4)) -le $n_files ]] ||
  fail "store holds $n_store files for $n_files captured (want at most $((n_files / 4))): $(ls "$STORE" | tr '\n' ' ')"
ok "store holds $n_store files ($n_cont containers) for $n_files captured files"
staged_left() { find "$CKPTFWD_STAGE_DIR" -name 'v*.data' | wc -l; }
wait_for '[[ $(staged_left) -eq 0 ]]' 10 || fail "$(staged_left) staged v*.data files still in $CKPTFWD_STAGE_DIR 10 s after the drain"
ok "staging space released after the commit"

timeout 120 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify $STORE exited non-zero: $(tail -5 "$T/verify.out")"
ok "ckptfwd verify clean"

timeout 60 "$CLI" ls "$STORE" >"$T/ls.out" 2>&1 || fail "ckptfwd ls $STORE exited non-zero: $(tail -5 "$T/ls.out")"
for f in "$DIRECT"/*; do
  grep -q "$(basename "$f")" "$T/ls.out" || fail "ckptfwd ls does not name $(basename "$f")"
done
ok "ckptfwd ls names every file"

mkdir -p "$OUT"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "ckptfwd restore: all $n_files files sha256-identical to the direct run"

# Read-back through the library (served from the containers; the forwarder may have exited).
"$WRITER" read "$DIRECT" --ranks 4 >"$T/digest.direct" || fail "ckpt_writer read of the direct run failed"
with_lib "$WRITER" read "$CAP" --ranks 4 >"$T/digest.lib" 2>"$T/digest.err" ||
  fail "ckpt_writer read under the library failed: $(tail -5 "$T/digest.err")"
diff "$T/digest.direct" "$T/digest.lib" >"$T/digest.diff" ||
  fail "read-back digests differ (direct vs library): $(head -10 "$T/digest.diff")"
ok "read/pread/fread/mmap under the library see the direct run's bytes"

"$WRITER" list "$DIRECT" >"$T/list.direct"
with_lib "$WRITER" list "$CAP" >"$T/list.lib" 2>"$T/list.err" || fail "ckpt_writer list under the library failed: $(cat "$T/list.err")"
diff "$T/list.direct" "$T/list.lib" >"$T/list.diff" || fail "readdir under the library differs from the direct run: $(head -10 "$T/list.diff")"
ok "readdir under the library lists the same $n_files names"
