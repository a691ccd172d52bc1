#!/usr/bin/env bash
# A dead forwarder that is a zombie counts as dead. The job script starts the forwarder as
# its own child (`ckptfwd-forwarder &`, CKPTFWD_NO_SPAWN=1) and never waits for it: once
# killed, it stays an unreaped zombie, whose pid still answers kill(pid, 0). A file being
# written through it when it dies must still close fine, written to its real path (the
# fallback of an unreachable forwarder): the fate file that names the dead forwarder's
# pid as the path's stager is stale, not "another process stages it through a live
# forwarder" (which would make close fail with EIO).
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30 CKPTFWD_NO_SPAWN=1 CKPTFWD_LOG_LEVEL=info

"$FW" "$DIRECT/z.dat" 8M >/dev/null || fail "direct run failed"
# The forwarder's parent execs `sleep`, which never reaps it (bash would).
sh -c '"$0" --foreground 2>>"$1" & echo $! >"$2"; exec sleep 300' "$FWD" "$T/fwd.err" "$T/fwd.pid" \
  </dev/null >/dev/null 2>&1 &
parent=$!
trap 'rc=$?; set +e; kill "$parent" 2>/dev/null; (exit $rc); ckf_cleanup' EXIT
wait_for "[[ -s '$T/fwd.pid' ]]" 10 || fail "the forwarder was not started"
fwd=$(cat "$T/fwd.pid")
wait_for "grep -q 'serving' '$CKPTFWD_LOG'" 30 || fail "the forwarder did not start: $(cat "$T/fwd.err")"
with_lib "$FW" "$CAP/z.dat" 8M --pause-at 4M "$T/gate" >"$T/w.out" 2>&1 &
writer=$!
wait_line "$T/w.out" "paused at 4194304"
compgen -G "$CKPTFWD_STAGE_DIR/ckptfwd-*/fate.[0-9a-f]*" >/dev/null || fail "z.dat is not staged through the forwarder"
kill -KILL "$fwd"
wait_for "[[ \$(awk '{print \$3}' /proc/$fwd/stat 2>/dev/null) == Z ]]" 10 ||
  fail "forwarder $fwd is not a zombie: $(cat "/proc/$fwd/stat" 2>/dev/null)"
ok "forwarder $fwd killed, left a zombie (its parent never reaps it)"
touch "$T/gate"
rc=0
wait "$writer" || rc=$?
[[ $rc -eq 0 ]] || fail "the writer exited $rc with its forwarder a zombie: $(cat "$T/w.out")"
assert_same_bytes "$DIRECT/z.dat" "$CAP/z.dat" "the real file after close fell back"
grep -q "z.dat" "$CKPTFWD_LOG" || fail "the fallback of z.dat is not logged"
[[ $(awk '{print $3}' "/proc/$fwd/stat" 2>/dev/null) == Z ]] || fail "the forwarder was reaped meanwhile: the test proved nothing"
ok "close wrote z.dat to its real path while the dead forwarder was a zombie: $(grep -m1 'z.dat' "$CKPTFWD_LOG" | cut -c1-160)"
kill "$parent" # its zombie child goes to init, which reaps it
