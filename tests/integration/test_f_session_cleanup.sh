#!/usr/bin/env bash
# The forwarder removes its session directory (socket, lock, read views) when it exits idle
# and drained, and a later run of the same job starts a new one there without trouble,
# even while clients race with the exit (they re-check the election lock they got).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
export CKPTFWD_IDLE_EXIT=1
CAP=$T/ckpt
mkdir -p "$CAP"
CAPTURE="$CAP/*"
sess() { ls -d "$CKPTFWD_STAGE_DIR"/ckptfwd-* 2>/dev/null || true; }
gone() { [[ -z "$(session_forwarders)" && -z "$(sess)" ]]; }

with_lib bash -c "printf one > '$CAP/a'; cat '$CAP/a' >/dev/null" || fail "first run failed"
wait_for gone 15 || fail "after an idle exit the session dir is still there: $(sess) ($(ls -A "$(sess)" 2>/dev/null | tr '\n' ' '))"
ok "session dir removed after the idle exit"

# Second run of the same job: a new forwarder, the committed file readable.
[[ "$(with_lib cat "$CAP/a")" == one ]] || fail "the committed file is not readable in a second run"
with_lib bash -c "printf two > '$CAP/b'" || fail "second run failed"
wait_for gone 15 || fail "session dir left after the second run: $(sess)"

# Clients starting while the forwarder exits: every file must still be captured.
for round in 1 2 3; do
  with_lib bash -c "printf r$round > '$CAP/x$round'" || fail "round $round failed"
  sleep 1.$((RANDOM % 5))   # around the 1 s idle exit
  for k in 1 2 3; do
    with_lib bash -c "printf $round$k > '$CAP/y$round$k'" &
  done
  wait || fail "a racing client failed in round $round"
done
for round in 1 2 3; do
  [[ "$(with_lib cat "$CAP/x$round")" == "r$round" ]] || fail "x$round lost"
  for k in 1 2 3; do
    [[ "$(with_lib cat "$CAP/y$round$k")" == "$round$k" ]] || fail "y$round$k lost"
    [[ ! -f "$CAP/y$round$k" ]] || fail "y$round$k fell back to a real file"
  done
done
wait_for gone 15 || fail "session dir left at the end: $(sess)"
ok "forwarders restarted cleanly across exits; every file captured; no session dir left"
