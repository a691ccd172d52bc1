#!/usr/bin/env bash
# Another user on the node plants the victim's session directory (docs/what-survives-what.md). The
# attacker is uid 65534 (setpriv); the victim is this test (root in CI). Three plants:
#   1. the session directory itself (mode 777, the attacker's) with a fake forwarder in it;
#   2. the victim's own directory, but its socket is the attacker's (moved in): the peer
#      uid (SO_PEERCRED) is not ours;
#   3. a fake forwarder of the victim's own uid that answers OPEN with a path outside the
#      session directory (a ~/.profile stand-in, a "..", a subdirectory).
# Each time: the victim's checkpoint does not land in the attacker's file (or the named
# one), the application's write succeeds directly with byte-exact content, the library
# does not stall, and the log names what it refused.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_attacker
ckf_std_dirs
FAKES=()
trap 'rc=$?; for p in "${FAKES[@]}"; do kill "$p" 2>/dev/null; done; (exit $rc); ckf_cleanup' EXIT
chmod 711 "$T"                      # the attacker reaches only the shared stage root
SHM=$T/shm
mkdir -m 1777 "$SHM"                # a stand-in for /dev/shm
export CKPTFWD_STAGE_DIR=$SHM
ATK=$SHM/attacker
"${ATTACKER[@]}" mkdir -m 777 "$ATK"
cp "$(dirname "$0")/fake_forwarder.py" "$ATK/fake.py"
chmod 755 "$ATK/fake.py"
"$WRITER" big "$DIRECT/a.bin" 300K

session_dir() { echo "$SHM/ckptfwd-$(id -u)-$CKPTFWD_JOB_ID-$CKPTFWD_NODE_ID"; }

# victim_run NAME: the application writes $CAP/NAME under the library; it must succeed,
# quickly, with the direct run's bytes in the real file.
victim_run() {
  local start=$SECONDS
  rm -f "$CAP/$1"
  timeout 50 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$WRITER" big "$CAP/$1" 300K \
    >"$T/victim.out" 2>&1 || fail "the application failed (exit $?): $(cat "$T/victim.out")"
  [[ $((SECONDS - start)) -le 20 ]] || fail "the application took $((SECONDS - start)) s"
  cmp -s "$DIRECT/a.bin" "$CAP/$1" || fail "$CAP/$1 is not the application's bytes (direct write expected)"
}

wait_listening() { wait_for "grep -q LISTENING '$1' 2>/dev/null" 10 || fail "the fake forwarder did not start: $1"; }

# --- 1. a planted session directory ---------------------------------------------------
export CKPTFWD_NODE_ID=plant
SD=$(session_dir)
"${ATTACKER[@]}" mkdir -m 777 "$SD"
"${ATTACKER[@]}" touch "$ATK/stolen.1"
chmod 666 "$ATK/stolen.1"
"${ATTACKER[@]}" timeout 120 /usr/bin/python3 "$ATK/fake.py" "$SD/sock" "$ATK/stolen.1" "$ATK/fake1.log" &
FAKES+=($!)
wait_listening "$ATK/fake1.log"
victim_run a1.bin
[[ ! -s "$ATK/stolen.1" ]] || fail "the checkpoint went into the attacker's file $ATK/stolen.1"
! grep -q HELLO "$ATK/fake1.log" || fail "the library talked to the planted socket: $(cat "$ATK/fake1.log")"
grep -q "refusing session directory $SD" "$CKPTFWD_LOG" || fail "the log does not name the refused directory $SD"
grep -q "Fix: remove it" "$CKPTFWD_LOG" || fail "the log does not say how to fix it"
ok "planted session directory refused, the write went directly to the real file"

# --- 2. our directory, the attacker's socket ----------------------------------------------
export CKPTFWD_NODE_ID=peer
SD=$(session_dir)
mkdir -m 700 "$SD"
"${ATTACKER[@]}" touch "$ATK/stolen.2"
chmod 666 "$ATK/stolen.2"
"${ATTACKER[@]}" timeout 120 /usr/bin/python3 "$ATK/fake.py" "$ATK/sock2" "$ATK/stolen.2" "$ATK/fake2.log" &
FAKES+=($!)
wait_listening "$ATK/fake2.log"
mv "$ATK/sock2" "$SD/sock"          # connect() reaches the listener through any name of it
victim_run a2.bin
[[ ! -s "$ATK/stolen.2" ]] || fail "the checkpoint went into the attacker's file $ATK/stolen.2"
! grep -q HELLO "$ATK/fake2.log" || fail "the library talked to a socket served by uid 65534"
grep -q "refusing forwarder socket $SD/sock: it is served by pid [0-9]* of uid 65534" "$CKPTFWD_LOG" ||
  fail "the log does not name the refused socket and its uid"
ok "a socket served by another uid refused (SO_PEERCRED)"

# --- 3. a forwarder naming staged paths outside the session directory -----------------------
i=0
for bad in "$T/profile" "@SD@/../profile" "@SD@/sub/v1.data"; do
  i=$((i + 1))
  export CKPTFWD_NODE_ID=path$i
  SD=$(session_dir)
  mkdir -m 700 "$SD" "$SD/sub"
  bad=${bad//@SD@/$SD}
  echo "precious $i" >"$bad"
  before=$(sha "$bad")
  timeout 120 /usr/bin/python3 "$ATK/fake.py" "$SD/sock" "$bad" "$T/fake3.$i.log" &
  FAKES+=($!)
  wait_listening "$T/fake3.$i.log"
  victim_run a3.$i.bin
  [[ $(sha "$bad") == "$before" ]] || fail "the library wrote into $bad, named by the forwarder"
  grep -q "staged path outside the session directory $SD" "$CKPTFWD_LOG" ||
    fail "the log does not say why the OPEN reply naming $bad was refused"
  ok "staged path $bad refused, never opened"
done
