#!/usr/bin/env bash
# A process that loads the library (an MPI rank, PMI_RANK set, or any other program) starts
# the node's forwarder at once, before its first checkpoint, without waiting for it and
# without leaving a child of its own (a wait() of the application finds none). That
# forwarder stays past CKPTFWD_IDLE_EXIT while the process lives without connecting, serves
# its first checkpoint, and leaves once the process is gone. CKPTFWD_EARLY_START=0 starts none;
# a forwarder that cannot start early is started (and its failure reported) by the first
# captured open, which then writes directly.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

CAP=$T/ckpt
mkdir -p "$CAP"
CAPTURE="$CAP/*"
sock_of_session() { compgen -G "$CKPTFWD_STAGE_DIR/ckptfwd-*-$CKPTFWD_JOB_ID-*/sock" | head -n 1; }
wait_for() {  # SECONDS CMD...: polls CMD every 0.1 s
  local i n=$(($1 * 10))
  shift
  for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
  return 1
}
has_sock() { [[ -n "$(sock_of_session)" ]]; }
no_forwarder() { [[ -z "$(session_forwarders)" ]]; }

cat >"$T/rank.py" <<'PY'
import os, sys, time
path, marker, go = sys.argv[1:4]
try:
    os.wait()
    print("child")  # the library left a child of its own in this process
except ChildProcessError:
    print("no-child")
open(marker, "w").close()
while not os.path.exists(go):  # the test looks at the forwarder meanwhile
    time.sleep(0.05)
with open(path, "wb") as f:
    f.write(b"early" * 20000)
PY

# 1. A rank: the forwarder comes up before any captured open, and stays while it waits.
PMI_RANK=0 with_lib /usr/bin/python3 "$T/rank.py" "$CAP/r0.bin" "$T/started" "$T/go" \
  >"$T/rank.out" 2>&1 &
rank=$!
wait_for 20 test -e "$T/started" || fail "the rank did not start"
wait_for 10 has_sock || fail "no forwarder listening before the rank's first open"
[[ "$(cat "$T/rank.out")" == no-child ]] || fail "the rank's wait() saw: $(cat "$T/rank.out")"
first=$(session_forwarders | sort | tr '\n' ' ')
sleep $((CKPTFWD_IDLE_EXIT + 2))  # longer than its idle exit
now=$(session_forwarders | sort | tr '\n' ' ')
[[ -n "$now" && "$now" == "$first" ]] ||
  fail "the forwarder did not stay while the rank lived (before: '$first', after: '$now')"
touch "$T/go"
wait "$rank" || fail "the rank failed: $(cat "$T/rank.out")"
[[ ! -e "$CAP/r0.bin" ]] || fail "r0.bin was written directly, not captured"
drain
restore_store "$CAP/.ckptfwd" "$T/out"
r=$(restored_file "$T/out" "$CAP/r0.bin")
[[ -n "$r" ]] || fail "r0.bin is not in the store"
/usr/bin/python3 -c "import sys; sys.exit(open(sys.argv[1],'rb').read() != b'early'*20000)" "$r" ||
  fail "r0.bin restored differs"
wait_for $((CKPTFWD_IDLE_EXIT + 10)) no_forwarder || fail "the forwarder stayed after the rank left"
ok "a rank starts the forwarder at its start; it stays while the rank lives, then leaves"

# 2. A program that is no rank starts it at its start too (no child left, no wait for it at
#    the first open); CKPTFWD_EARLY_START=0: no forwarder until a captured open.
export CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-b"
rm -f "$T/started" "$T/go"
with_lib /usr/bin/python3 "$T/rank.py" "$CAP/p0.bin" "$T/started" "$T/go" >"$T/prog.out" 2>&1 &
prog=$!
wait_for 20 test -e "$T/started" || fail "the program did not start"
wait_for 10 has_sock || fail "no forwarder listening before the program's first open"
[[ "$(cat "$T/prog.out")" == no-child ]] || fail "the program's wait() saw: $(cat "$T/prog.out")"
touch "$T/go"
wait "$prog" || fail "the program failed: $(cat "$T/prog.out")"
[[ ! -e "$CAP/p0.bin" ]] || fail "p0.bin was written directly, not captured"
drain
wait_for $((CKPTFWD_IDLE_EXIT + 10)) no_forwarder || fail "the forwarder stayed after the program left"
export CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-off"
PMI_RANK=0 CKPTFWD_EARLY_START=0 with_lib /usr/bin/python3 -c "import time; time.sleep(1)"
no_forwarder && ! has_sock || fail "CKPTFWD_EARLY_START=0 started a forwarder"
ok "a program that is no rank starts it early too; none with CKPTFWD_EARLY_START=0"

# 3. A forwarder that cannot start: nothing said at the rank's start; its first captured
#    open tries again, says why, and writes the file directly.
export CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-c"
PMI_RANK=0 CKPTFWD_FORWARDER=/bin/false with_lib /usr/bin/python3 -c "
import sys
with open(sys.argv[1], 'wb') as f: f.write(b'direct')" "$CAP/r1.bin" 2>"$T/c.err" ||
  fail "the rank failed without a forwarder"
[[ "$(cat "$CAP/r1.bin" 2>/dev/null)" == direct ]] || fail "r1.bin was not written directly"
grep -q "/bin/false --daemon failed" "$T/c.err" "$CKPTFWD_LOG" 2>/dev/null ||
  fail "the first open did not report the failed start: $(cat "$T/c.err")"
ok "a forwarder that cannot start is reported by the first open, which writes directly"

# 4. A wrapper with other settings than the application's (`env CKPTFWD_STORE=... app`, the
#    library in `env` first): the forwarder `env` started early retires at the application's
#    HELLO, and one started with the application's settings takes its file, into its store.
#    A program with the same settings as its starter is served by the early forwarder.
export CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-d"
CAP4=$T/ckpt4
mkdir -p "$CAP4"
CAPTURE="$CAP4/*"
: >"$CKPTFWD_LOG"
CKPTFWD_LOG_LEVEL=info with_lib env CKPTFWD_STORE="$T/other" /usr/bin/python3 -c "
import sys
with open(sys.argv[1], 'wb') as f: f.write(b'wrapped' * 1000)" "$CAP4/w.bin" ||
  fail "the wrapped program failed"
[[ ! -e "$CAP4/w.bin" ]] || fail "w.bin was written directly, not captured"
drain
[[ -f "$T/other/MANIFEST" ]] || fail "w.bin did not go to the application's store $T/other"
[[ ! -e "$CAP4/.ckptfwd/MANIFEST" ]] || fail "w.bin went to the wrapper's (default) store"
grep -q "other settings" "$CKPTFWD_LOG" || fail "the early forwarder did not say why it left"
restore_store "$T/other" "$T/out4"
r=$(restored_file "$T/out4" "$CAP4/w.bin")
[[ -n "$r" ]] && /usr/bin/python3 -c "import sys; sys.exit(open(sys.argv[1],'rb').read() != b'wrapped'*1000)" "$r" ||
  fail "w.bin restored differs"
export CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-e"
: >"$CKPTFWD_LOG"
CKPTFWD_LOG_LEVEL=info with_lib env /usr/bin/python3 -c "
import sys
with open(sys.argv[1], 'wb') as f: f.write(b'same' * 1000)" "$CAP4/s.bin" || fail "the program failed"
drain
! grep -q "other settings" "$CKPTFWD_LOG" || fail "a forwarder with the program's own settings retired"
[[ -f "$CAP4/.ckptfwd/MANIFEST" ]] || fail "s.bin is not in the default store"
ok "a forwarder started early with other settings than its first client's leaves for one with them"
