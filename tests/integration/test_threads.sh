#!/usr/bin/env bash
# Concurrency: 8 threads of one process write 16 captured files at the same time
# (write/lseek/pwrite interleaved, and stdio), and 8 MPICH ranks on this 2-core machine
# write 64 files at once (oversubscribed, so the library's calls and the forwarder's
# ingest overlap heavily). Restore and a read through the library equal the direct run.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich

ckf_std_dirs

"$WRITER" threads "$DIRECT" 8 || fail "threaded writer failed without the library"
with_lib "$WRITER" threads "$CAP" 8 2>"$T/thr.err" || fail "threaded writer failed under the library: $(tail -5 "$T/thr.err")"
ok "8 threads wrote 16 files concurrently"

timeout 120 mpiexec.mpich -n 8 "$WRITER" write "$DIRECT" --no-fsync >/dev/null || fail "direct 8-rank run failed"
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
  mpiexec.mpich -n 8 "$WRITER" write "$CAP" --no-fsync >"$T/write.out" 2>&1 ||
  fail "8 ranks under the library failed: $(tail -5 "$T/write.out")"
ok "8 ranks on 2 cores wrote 64 files"

for f in "$DIRECT"/*; do
  [[ ! -f "$CAP/$(basename "$f")" ]] || fail "$CAP/$(basename "$f") is a regular file on disk: not captured"
done
"$WRITER" read "$DIRECT" --ranks 8 >"$T/digest.direct"
with_lib "$WRITER" read "$CAP" --ranks 8 >"$T/digest.lib" 2>"$T/digest.err" || fail "read-back failed: $(tail -5 "$T/digest.err")"
diff "$T/digest.direct" "$T/digest.lib" >/dev/null || fail "read-back digests differ: $(diff "$T/digest.direct" "$T/digest.lib" | head -6)"
for i in 0 3 7; do
  with_lib cmp "$CAP/thr_$i.bin" "$DIRECT/thr_$i.bin" || fail "thr_$i.bin through the library differs"
done

drain
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify failed: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "all $(ls "$DIRECT" | wc -l) files restore and read back identical"
