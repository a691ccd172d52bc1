#!/usr/bin/env bash
# The forwarder is killed with SIGKILL while an application is in the middle of writing a
# file (the version is open), then the application goes on: more writes, possibly an
# fsync, then close and exit. What must hold: every call succeeds (the library starts a new
# forwarder, which recovers the open version as still open), the version is committed with
# every byte it was closed with, never with the half that was in staging at the kill, and
# it is on the store when the process has exited. Before the recovery protocol, the
# recovery committed the half-written file as a closed version and the later close was
# answered OK for an unknown version: the store kept the first half.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30

run_case() {  # name size pause [fsync-at]
  local name=$1 size=$2 pause=$3 fsync_at=${4:-}
  local extra=()
  [[ -n "$fsync_at" ]] && extra=(--fsync-at "$fsync_at")
  "$FW" "$DIRECT/$name" "$size" "${extra[@]}" >/dev/null || fail "direct run of $name failed"
  with_lib "$FW" "$CAP/$name" "$size" --pause-at "$pause" "$T/gate-$name" "${extra[@]}" \
    >"$T/$name.out" 2>&1 &
  kill_at_pause "$name" $! "paused at $(( $(numfmt --from=iec "$pause") ))"
  ok "$name: every call succeeded after the kill at $pause of $size"
  assert_store_has "$CAP/$name" "$DIRECT/$name"
  ok "$name: the store holds all $size bytes as closed, right after the process exited"
}

run_case plain.dat 48M 24M
run_case synced.dat 48M 16M 32M
assert_verify_clean
# A restart through the library reads the newest complete versions.
for f in plain.dat synced.dat; do
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" cat "$CAP/$f" >"$T/readback"
  assert_same_bytes "$DIRECT/$f" "$T/readback" "read back through the library: $f"
done
ok "verify clean; a reader through the library sees both files whole"
