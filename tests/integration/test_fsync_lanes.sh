#!/usr/bin/env bash
# An fsync while a large batch of closed files is being compressed (two batches in flight,
# src/forwarder/batching/batcher.h), through the library:
#   1. bench_fsync writes bulk.bin (256 MiB of float64 field) and closes it without an
#      fsync, and without waiting at exit (CKPTFWD_EXIT_WAIT=0);
#   2. once its batch is sealed, a second program writes ck.bin and fsyncs it (written
#      beside that batch), then updates bulk.bin in place (4 bytes at offset 0, no
#      O_TRUNC) and fsyncs it: that version must be committed after the one in flight.
# Both restore to what a run without the library wrote (`ckptfwd restore` checks every
# hash) and `ckptfwd verify` finds the store sound.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
APP=$BUILD/bin/bench_fsync
[[ -x "$APP" ]] || fail "$APP is missing: build first"
export CKPTFWD_BATCH_WINDOW_MS=100 CKPTFWD_WAVE_WINDOW_MS=200 CKPTFWD_LOG_LEVEL=debug
cat >"$T/second.py" <<'PY'
import os, sys
d = sys.argv[1]
fd = os.open(os.path.join(d, "ck.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, bytes((i * 7) & 0xFF for i in range(1 << 16)) * 64)
os.fsync(fd)
os.close(fd)
fd = os.open(os.path.join(d, "bulk.bin"), os.O_WRONLY)
os.pwrite(fd, b"NEW!", 0)
os.fsync(fd)
os.close(fd)
PY
bulk=(--mib 256 --seed 7 --no-fsync --keep)
"$APP" "${bulk[@]}" --path "$DIRECT/bulk.bin" >/dev/null || fail "the direct bulk run failed"
/usr/bin/python3 "$T/second.py" "$DIRECT" || fail "the direct second program failed"

with_lib env CKPTFWD_EXIT_WAIT=0 "$APP" "${bulk[@]}" --path "$CAP/bulk.bin" >/dev/null ||
  fail "bench_fsync under the library failed"
sleep 0.4 # the bulk batch is sealed after the wave window
with_lib /usr/bin/python3 "$T/second.py" "$CAP" || fail "the second program under the library failed"
drain
restore_store "$STORE" "$OUT"
for f in bulk.bin ck.bin; do
  r=$(restored_file "$OUT" "$CAP/$f")
  [[ -n "$r" ]] || fail "restore did not give $f"
  [[ "$(sha "$r")" == "$(sha "$DIRECT/$f")" ]] || fail "$f restored with other bytes"
done
"$CLI" verify "$STORE" >"$T/verify.txt" 2>&1 || fail "ckptfwd verify failed: $(tail -3 "$T/verify.txt")"
# Which way it went depends on the machine's speed: said, not asserted.
order=$(grep -o 'files, [0-9]* bytes[^:]*' "$CKPTFWD_LOG" | tr '\n' ';')
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "the forwarder did not leave"
beside=$(stats_sum "$T/stats.jsonl" forwarder fsync_batches_beside)
ok "an fsync beside a 256 MiB batch and an update of its file committed in order (batches: $order; fsync_batches_beside $beside)"
