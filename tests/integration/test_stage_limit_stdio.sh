#!/usr/bin/env bash
# test_stage_limit.sh for stdio: glibc's fwrite flushes through its internal write, which
# the library cannot see, so the wrapped fwrite itself must notice that the stream is about
# to outgrow its staging budget (CKPTFWD_STAGE_LIMIT=1M) and switch the file to a direct
# write of its real path before the bytes go out. A 6 MiB file written with fwrite must end
# up on disk with the bytes of a run without the library, with the fallback counted, while
# a small fwrite file open in the same process at the same time stays captured. Written
# twice: in 64 KiB fwrite calls, and in 1000-byte calls (bytes pending in the stream buffer
# when the switch happens must land in the real file too).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_STAGE_LIMIT=1M

"$WRITER" bigstdio "$DIRECT/big.bin" 6M --small "$DIRECT/small.bin" || fail "direct run failed"
"$WRITER" big "$DIRECT/big_write.bin" 6M || fail "direct run failed"
assert_same_bytes "$DIRECT/big_write.bin" "$DIRECT/big.bin" "bigstdio writes the bytes of big"

for chunk in 65536 1000; do
  big=$CAP/big_$chunk.bin
  small=$CAP/small_$chunk.bin
  with_lib "$WRITER" bigstdio "$big" 6M --chunk "$chunk" --small "$small" 2>"$T/w.err" ||
    fail "the 6 MiB fwrite ($chunk-byte calls) under a 1M staging limit failed: $(tail -5 "$T/w.err")"
  ok "6 MiB written with fwrite ($chunk-byte calls) under CKPTFWD_STAGE_LIMIT=1M"

  [[ -f "$big" ]] || fail "$big is not on disk: the fwrite stream should have switched to a direct write"
  assert_same_bytes "$DIRECT/big.bin" "$big" "direct-written $(basename "$big")"
  [[ ! -f "$small" ]] || fail "$small (under the limit) is on disk: it should stay captured"
  ok "$(basename "$big") is on disk with the direct run's bytes; the small stream stayed captured"

  with_lib sha256sum "$small" >"$T/small.sha" 2>"$T/r.err" || fail "reading $small under the library failed: $(cat "$T/r.err")"
  [[ "$(cut -d' ' -f1 "$T/small.sha")" == "$(sha "$DIRECT/small.bin")" ]] || fail "captured $small read through the library differs from the direct run"
  with_lib sha256sum "$big" >"$T/lib.sha" 2>"$T/r.err" || fail "reading $big under the library failed: $(cat "$T/r.err")"
  [[ "$(cut -d' ' -f1 "$T/lib.sha")" == "$(sha "$DIRECT/big.bin")" ]] || fail "$big read through the library differs from the direct run"
  ok "the library reads both back"
done

grep -q "size budget reached" "$CKPTFWD_LOG" ||
  fail "the log does not name the budget as the reason of the fallback: $(cat "$CKPTFWD_LOG")"

assert_fallback_counted
