#!/usr/bin/env bash
# Staging space runs out mid-file: with CKPTFWD_STAGE_LIMIT=1M a 6 MiB file must switch to a
# direct write of its real path (the staged prefix copied, the fd switched in place), with
# the same bytes as a run without the library, and the fallback counted. A small file in the
# same process stays captured, so the limit affects only the file that exceeded it.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_STAGE_LIMIT=1M

"$WRITER" big "$DIRECT/big.bin" 6M || fail "direct run failed"
"$WRITER" big "$DIRECT/small.bin" 100K || fail "direct run failed"
with_lib "$WRITER" big "$CAP/small.bin" 100K 2>"$T/w.err" || fail "writing a 100 KiB captured file failed: $(tail -5 "$T/w.err")"
with_lib "$WRITER" big "$CAP/big.bin" 6M 2>"$T/w.err" || fail "the 6 MiB write under a 1M staging limit failed: $(tail -5 "$T/w.err")"
ok "6 MiB written under CKPTFWD_STAGE_LIMIT=1M"

[[ -f "$CAP/big.bin" ]] || fail "$CAP/big.bin is not on disk: it should have switched to a direct write"
assert_same_bytes "$DIRECT/big.bin" "$CAP/big.bin" "direct-written big.bin"
[[ ! -f "$CAP/small.bin" ]] || fail "$CAP/small.bin (under the limit) is on disk: it should stay captured"
ok "big.bin is on disk with the direct run's bytes; the small file stayed captured"
with_lib sha256sum "$CAP/small.bin" >"$T/small.sha" 2>"$T/r.err" || fail "reading small.bin under the library failed: $(cat "$T/r.err")"
[[ "$(cut -d' ' -f1 "$T/small.sha")" == "$(sha "$DIRECT/small.bin")" ]] || fail "captured small.bin read through the library differs from the direct run"

# The library must also read the real file back (the forwarder forgot its staged prefix).
with_lib sha256sum "$CAP/big.bin" >"$T/lib.sha" 2>"$T/r.err" || fail "reading big.bin under the library failed: $(cat "$T/r.err")"
[[ "$(cut -d' ' -f1 "$T/lib.sha")" == "$(sha "$DIRECT/big.bin")" ]] || fail "big.bin read through the library differs from the direct run"
with_lib stat -c %s "$CAP/big.bin" >"$T/size" || fail "stat under the library failed"
[[ "$(cat "$T/size")" == "$((6 * 1048576))" ]] || fail "stat -c %s through the library says $(cat "$T/size"), want $((6 * 1048576))"
ok "the library reads big.bin back from the real path"

assert_fallback_counted
