#!/usr/bin/env bash
# Newest wins, whatever wrote it. Job A writes ckpt.bin through the forwarder (v1 in the
# store); job B writes v2 directly: its library cannot stage it (CKPTFWD_DISABLE, a
# forwarder that cannot start because of a bad setting, a refused session directory) or
# there is no library at all. What must hold: job C, restarting through the library, reads
# v2 (its bytes, its size), not the store's v1, and so does `ckptfwd restore`; a job that
# then writes v5 through the forwarder again is read back as v5 (the store wins once it is
# the newer). Before, job C and the restore gave v1 with exit 0.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_NODE_ID=n1
F=$CAP/ckpt.bin
base_job=$CKPTFWD_JOB_ID

# version N of ckpt.bin: (N+1) MiB of content seed N, oracle in $DIRECT/vN
for n in 1 2 3 4 5 6; do
  "$FW" "$DIRECT/v$n" "$((n + 1))M" --seed "$n" >/dev/null || fail "direct run of v$n failed"
done

# restart_reads N WHY: a new job reads ckpt.bin through the library: version N's bytes and size.
restart_reads() {
  local n=$1 why=$2 job="$base_job-read$1"
  CKPTFWD_JOB_ID=$job with_lib cmp "$F" "$DIRECT/v$n" >"$T/cmp.out" 2>&1 ||
    fail "after $why, a restart through the library does not read v$n: $(cat "$T/cmp.out")"
  local size
  size=$(CKPTFWD_JOB_ID=$job with_lib stat -c %s "$F")
  [[ $size -eq $(stat -c %s "$DIRECT/v$n") ]] || fail "after $why, stat through the library says $size bytes, not v$n's"
  ok "after $why, a restart reads v$n (bytes and size)"
  # ckptfwd restore, without the library, gives the same newest bytes.
  local out=$T/restored-$n
  timeout 120 "$CLI" restore "$STORE" --to "$out" >"$T/restore.out" 2>&1 ||
    fail "after $why, ckptfwd restore exited $?: $(cat "$T/restore.out")"
  assert_same_bytes "$DIRECT/v$n" "$out/ckpt.bin" "ckptfwd restore after $why"
}

CKPTFWD_JOB_ID=$base_job-a with_lib "$FW" "$F" 2M --seed 1 >/dev/null || fail "job A failed"
CKPTFWD_JOB_ID=$base_job-a drain
[[ ! -e "$F" ]] || fail "job A left a real file: the test shows nothing"
restart_reads 1 "job A"

CKPTFWD_JOB_ID=$base_job-b CKPTFWD_DISABLE=1 with_lib "$FW" "$F" 3M --seed 2 >/dev/null || fail "job B failed"
assert_same_bytes "$DIRECT/v2" "$F" "v2 written directly"
restart_reads 2 "a direct write with CKPTFWD_DISABLE=1"

CKPTFWD_JOB_ID=$base_job-c CKPTFWD_LOG_LEVEL=abc with_lib "$FW" "$F" 4M --seed 3 >/dev/null || fail "job with a bad setting failed"
assert_same_bytes "$DIRECT/v3" "$F" "v3 written directly (the forwarder could not start)"
restart_reads 3 "a direct write whose forwarder could not start (CKPTFWD_LOG_LEVEL=abc)"

# A session directory another user could write: refused, the file is written directly.
planted=$CKPTFWD_STAGE_DIR/ckptfwd-$(id -u)-$base_job-d-n1
mkdir -p "$planted" && chmod 777 "$planted"
CKPTFWD_JOB_ID=$base_job-d with_lib "$FW" "$F" 5M --seed 4 >/dev/null || fail "job with a refused session failed"
assert_same_bytes "$DIRECT/v4" "$F" "v4 written directly (session refused)"
restart_reads 4 "a direct write beside a refused session directory"

CKPTFWD_JOB_ID=$base_job-e with_lib "$FW" "$F" 6M --seed 5 >/dev/null || fail "job E failed"
CKPTFWD_JOB_ID=$base_job-e drain
restart_reads 5 "v5 through the forwarder again, after the direct v4"

"$FW" "$F" 7M --seed 6 >/dev/null || fail "the write without the library failed"
restart_reads 6 "a write without the library at all"
