#!/usr/bin/env bash
# A rank killed mid-write (docs/what-survives-what.md): a process writes and closes one captured
# file, then writes 300 KiB into a second one and is SIGKILLed with it still open (no close,
# no atexit, no exit-wait). The closed file must commit; the partial file is kept as a direct
# write would have left it (its 300 KiB, byte-identical to the same kill without the
# library); the forwarder must not be left with a version pending forever (drain returns,
# pending_versions is 0).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30   # alive for the stats query below; stopped by the cleanup

set +e
# (bash reports the kills on stderr: "Killed ...", expected)
"$WRITER" die "$DIRECT/partial.bin" 300K --closed-first "$DIRECT/done.bin" 2>/dev/null
rc_direct=$?
with_lib "$WRITER" die "$CAP/partial.bin" 300K --closed-first "$CAP/done.bin" 2>/dev/null
rc_lib=$?
set -e
[[ $rc_direct -eq 137 && $rc_lib -eq 137 ]] || fail "the writer should die of SIGKILL (137): direct $rc_direct, library $rc_lib"
ok "the writer was SIGKILLed with partial.bin open, with and without the library"

drain
with_lib cmp "$CAP/done.bin" "$DIRECT/done.bin" || fail "done.bin (closed before the kill) reads back wrong through the library"
with_lib cmp "$CAP/partial.bin" "$DIRECT/partial.bin" 2>"$T/cmp.err" ||
  fail "partial.bin through the library is not what the direct killed run left: $(cat "$T/cmp.err")"
ok "through the library both files read back as the direct run left them"

timeout 30 "$CLI" stats --json >"$T/stats.json" 2>&1 || fail "ckptfwd stats --json failed: $(cat "$T/stats.json")"
/usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["pending_versions"] != 0)' "$T/stats.json" ||
  fail "the dead client's version is still pending: $(cat "$T/stats.json")"

restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "restore gives the closed file and the partial file exactly as the direct run left them"
