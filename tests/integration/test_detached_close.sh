#!/usr/bin/env bash
# Closes not waited for (src/interpose/track/detached_close.h): a script's close of a file
# opened on a lease returns once its CLOSE is sent (stats closes_unwaited), and nothing
# the application could see changes:
# - another process that opens or stats a file right after its writer's close returned
#   sees the whole file (close-to-open), also a read of it in the same process;
# - a forwarder stopped while the close is sent and killed before it acted on it: the
#   close returns at once with the bytes only staged (nothing at the real path yet), and
#   the process's exit acts on the refusal of the next forwarder (the version was lost
#   with the killed one): the file is at its real path, whole, and the exit status is 0;
# - every byte read back by a new job is as a run without the library leaves it.
# CKPTFWD_DETACHED_CLOSE=0 waits at every close again.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=60
PY=/usr/bin/python3
cat >"$T/w.py" <<'PYEOF'
import os, subprocess, sys
d = sys.argv[1]
for i in range(60):
    name = f"{d}/f{i}.bin"
    data = (b"%06d" % i) * (200 + 7 * i)
    with open(name, "wb") as f:
        f.write(data)
    if i % 10 == 9:  # another process, right after the close returned
        out = subprocess.run(["cat", name], capture_output=True)
        if out.returncode != 0 or out.stdout != data:
            sys.exit(f"another process read {len(out.stdout)} bytes of {name}, not {len(data)}")
        size = subprocess.run(["stat", "-c", "%s", name], capture_output=True, text=True)
        if size.stdout.strip() != str(len(data)):
            sys.exit(f"another process's stat of {name} said {size.stdout!r}, not {len(data)}")
    if i % 10 == 5:  # this process, right after its close
        with open(name, "rb") as f:
            if f.read() != data:
                sys.exit(f"{name} read back in the writing process differs")
PYEOF
stat_of() { timeout 30 "$CLI" stats --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

"$PY" "$T/w.py" "$DIRECT" || fail "the direct run failed"
with_lib "$PY" "$T/w.py" "$CAP" || fail "the run under the library failed: $(tail -3 "$CKPTFWD_LOG")"
n=$(stat_of closes_unwaited)
# 60 files; the first open waits (no lease yet), the others find one in hand.
[[ $n -ge 55 ]] || fail "only $n of the script's 60 closes went unwaited"
ok "$n closes went unwaited; other processes and the writer saw every file whole at once"
drain
assert_read_back_by_new_job

mkdir -p "$CAP/off" "$DIRECT/off"
before=$(stat_of closes_unwaited)
CKPTFWD_DETACHED_CLOSE=0 with_lib "$PY" "$T/w.py" "$CAP/off" || fail "the run with CKPTFWD_DETACHED_CLOSE=0 failed"
[[ $(stat_of closes_unwaited) == "$before" ]] ||
  fail "CKPTFWD_DETACHED_CLOSE=0 still left closes unwaited ($before, then $(stat_of closes_unwaited))"
ok "every close waited with CKPTFWD_DETACHED_CLOSE=0"

# The forwarder stops and is killed between a close and its reply.
cat >"$T/kill.py" <<'PYEOF'
import os, signal, subprocess, sys, time
d, pid = sys.argv[1], int(sys.argv[2])
def write(name, data):
    with open(f"{d}/{name}", "wb") as f:
        f.write(data)
write("a.bin", b"a" * 5000)  # the first open waits, its close brings a lease
write("b.bin", b"b" * 5000)
os.stat(f"{d}/a.bin")  # a waited request: the replies owed so far are read (a lease too)
os.kill(pid, signal.SIGSTOP)
def stopped():  # every thread: kill() returns before a thread busy on another core stops
    tasks = os.listdir(f"/proc/{pid}/task")
    return all(open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0] == "T"
               for t in tasks)
while not stopped():
    time.sleep(0.001)
write("c.bin", b"c" * 7777)  # on the lease; its close is not waited for
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
real = subprocess.run(["ls", d], capture_output=True, text=True, env=env).stdout.split()
if "c.bin" in real:
    sys.exit(f"c.bin is at its real path before the forwarder acted on its close: {real}")
os.kill(pid, signal.SIGKILL)
print("closed while the forwarder was stopped")
PYEOF
mkdir -p "$CAP/k"
pid=$(session_forwarders | head -1)  # the first run's, still running
[[ -n $pid ]] || fail "no forwarder runs for session $CKPTFWD_JOB_ID"
rc=0
out=$(with_lib "$PY" "$T/kill.py" "$CAP/k" "$pid" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "the script exited $rc: $out; log: $(tail -5 "$CKPTFWD_LOG")"
[[ $out == *"closed while the forwarder was stopped"* ]] || fail "unexpected output: $out"
printf 'c%.0s' $(seq 7777) >"$T/c.want"
assert_same_bytes "$T/c.want" "$CAP/k/c.bin" "c.bin at its real path after the exit"
grep -q "c.bin was not handed over\|c.bin" "$CKPTFWD_LOG" ||
  fail "the log does not say what happened to c.bin: $(tail -5 "$CKPTFWD_LOG")"
for f in a b; do
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-k" \
    cat "$CAP/k/$f.bin" >"$T/readback"
  printf "$f%.0s" $(seq 5000) >"$T/want"
  assert_same_bytes "$T/want" "$T/readback" "$f.bin read back by a new job after the kill"
done
ok "a close sent to a stopped forwarder returned at once; after its kill the exit wrote the file to its real path"
