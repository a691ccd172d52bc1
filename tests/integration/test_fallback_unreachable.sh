#!/usr/bin/env bash
# The forwarder is unreachable (CKPTFWD_NO_SPAWN=1 and none running): the application must
# still succeed with every file written directly to its real path, byte-identical to a run
# without the library; the library logs "forwarder unreachable" (once per process, not once
# per file) and appends a client stats line with fallbacks > 0.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich

DIRECT=$T/direct
CAP=$T/ckpt
mkdir -p "$DIRECT" "$CAP"
CAPTURE="$CAP/*"
export CKPTFWD_NO_SPAWN=1

[[ -z "$(session_forwarders)" ]] || fail "a forwarder of this session is running before the test"
timeout 120 mpiexec.mpich -n 2 "$WRITER" write "$DIRECT" >/dev/null || fail "direct run failed"
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
  mpiexec.mpich -n 2 "$WRITER" write "$CAP" >"$T/write.out" 2>&1 ||
  fail "the writer failed with the forwarder unreachable: $(tail -5 "$T/write.out")"
[[ -z "$(session_forwarders)" ]] || fail "a forwarder was started although CKPTFWD_NO_SPAWN=1"
ok "the writer succeeded with no forwarder"

n=0
for f in "$DIRECT"/*; do
  name=$(basename "$f")
  [[ -f "$CAP/$name" ]] || fail "$CAP/$name is not on disk after the fallback"
  assert_same_bytes "$f" "$CAP/$name" "direct-written $name"
  n=$((n + 1))
done
[[ ! -e "$CAP/ckpt_r0.bin.tmp" ]] || fail "the renamed temporary $CAP/ckpt_r0.bin.tmp is still on disk"
extra=$(comm -13 <(ls "$DIRECT") <(ls "$CAP"))
[[ -z "$extra" ]] || fail "unexpected files on disk after the fallback: $extra"
ok "all $n files are on disk with the direct run's bytes"

[[ -s "$CKPTFWD_LOG" ]] || fail "the library wrote no log to CKPTFWD_LOG=$CKPTFWD_LOG"
grep -q '^ckptfwd: .*forwarder unreachable' "$CKPTFWD_LOG" ||
  fail "the log does not say 'forwarder unreachable': $(head -5 "$CKPTFWD_LOG")"
n_msgs=$(grep -c 'forwarder unreachable' "$CKPTFWD_LOG")
[[ $n_msgs -le 4 ]] || fail "'forwarder unreachable' logged $n_msgs times for 2 processes (should be once each)"
ok "the log says 'forwarder unreachable' ($n_msgs lines for 2 processes)"

[[ -s "$CKPTFWD_STATS_FILE" ]] || fail "no stats were written to CKPTFWD_STATS_FILE=$CKPTFWD_STATS_FILE"
fallbacks=$(stats_sum "$CKPTFWD_STATS_FILE" client fallbacks) || fail "stats file is not JSON lines: $fallbacks"
[[ $fallbacks -gt 0 ]] || fail "client stats lines count no fallbacks: $(cat "$CKPTFWD_STATS_FILE")"
grep -q '"reason"' "$CKPTFWD_STATS_FILE" || fail "client stats line has no reason: $(cat "$CKPTFWD_STATS_FILE")"
ok "client stats count $fallbacks fallbacks"
