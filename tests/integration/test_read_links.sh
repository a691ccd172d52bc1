#!/usr/bin/env bash
# Read links (src/wire/read_link.h) as a restarting script meets them: a new job reading
# a store's small files opens most of them without a request to the forwarder (stats
# read_opens below the files read, read_links published), every byte as written. And no
# link ever shows bytes something changed since, within the job and outside it, each
# checked right after a read made the link:
#   a rewrite by another process (a leased open), also while its writer still holds the
#   file open; a truncate, an unlink, a rename onto the path, a chmod; a file written by a
#   process without the library; a rewrite by another job on the same store; a rewrite by
#   a process of the job on another (simulated) node, which joins the first one's group.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=60
export CKPTFWD_JOB_ID=rl-$$  # (short: several sessions' socket paths)
PY=/usr/bin/python3
N=300

cat >"$T/write.py" <<'PYEOF'
import sys
d, n, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
for i in range(n):
    with open(f"{d}/f{i}.bin", "wb") as f:
        f.write(tag + b"%06d" % i * (50 + i % 700))
PYEOF
expected() { "$PY" -c "import sys; sys.stdout.buffer.write(b'$1' + b'%06d' % $2 * (50 + $2 % 700))"; }
stat_of() {
  timeout 30 "$CLI" stats --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}

"$PY" "$T/write.py" "$DIRECT" $N A || fail "the direct run failed"
CKPTFWD_JOB_ID=rl-w-$$ with_lib "$PY" "$T/write.py" "$CAP" $N A || fail "the writing job failed"
ok "$N files written by a first job"

# --- a new job reads them all ---
cat >"$T/read_all.py" <<'PYEOF'
import sys
d, ref, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
bad = [i for i in range(n) if open(f"{d}/f{i}.bin", "rb").read() != open(f"{ref}/f{i}.bin", "rb").read()]
sys.exit(f"files read wrong: {bad[:10]}" if bad else 0)
PYEOF
with_lib "$PY" "$T/read_all.py" "$CAP" "$DIRECT" $N || fail "the new job's read-back"
# The prefetch stages every view (and its link) while the first pass reads; the second
# pass finds them all.
sleep 1
with_lib "$PY" "$T/read_all.py" "$CAP" "$DIRECT" $N || fail "the new job's second read-back"
links=$(stat_of read_links)
opens=$(stat_of read_opens)
[[ $links -ge $((N - 10)) ]] || fail "only $links read links published for $N stored files"
[[ $opens -lt $N ]] || fail "the forwarder answered $opens read opens for 2 x $N files read: no link was used"
ok "$((2 * N)) reads of stored files, $opens of them asked the forwarder ($links read links)"

# Off: every read asks.
CKPTFWD_JOB_ID=rl-off-$$ CKPTFWD_READ_LINKS=0 with_lib "$PY" -c "
import os, subprocess, sys, time
subprocess.run([sys.executable, '$T/read_all.py', '$CAP', '$DIRECT', '$N'], check=True)
time.sleep(1)
subprocess.run([sys.executable, '$T/read_all.py', '$CAP', '$DIRECT', '$N'], check=True)
out = subprocess.run(['$CLI', 'stats', '--json'], capture_output=True, text=True, check=True).stdout
import json; s = json.loads(out)
sys.exit(0 if s['read_links'] == 0 and s['read_opens'] == 2 * $N else f'links {s[\"read_links\"]}, opens {s[\"read_opens\"]}')" ||
  fail "with CKPTFWD_READ_LINKS=0"
ok "with CKPTFWD_READ_LINKS=0 every read asks the forwarder"

# --- nothing stale, within the job ---
cat >"$T/attack.py" <<'PYEOF'
import os, subprocess, sys, time
d, ref, lib = sys.argv[1], sys.argv[2], sys.argv[3]
def A(i): return open(f"{ref}/f{i}.bin", "rb").read()
def read(i): return open(f"{d}/f{i}.bin", "rb").read()
def child(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode: sys.exit(f"child failed: {code}: {r.stderr}")
def check(what, got, want):
    if got != want: sys.exit(f"{what}: read {got[:40]!r}... ({len(got)} bytes), expected {want[:40]!r}... ({len(want)} bytes)")
    print("ok:", what)

assert read(1) == A(1)
child(f"open('{d}/f1.bin', 'wb').write(b'B' * 5000)")
check("a rewrite by another process", read(1), b"B" * 5000)

assert read(2) == A(2)
child(f"import os; os.truncate('{d}/f2.bin', 10)")
check("a truncate", read(2), A(2)[:10])

assert read(3) == A(3)
child(f"import os; os.unlink('{d}/f3.bin')")
try:
    open(f"{d}/f3.bin", "rb")
    sys.exit("an unlinked file still opens")
except FileNotFoundError:
    print("ok: an unlink")

assert read(4) == A(4) and read(5) == A(5)
child(f"import os; os.rename('{d}/f4.bin', '{d}/f5.bin')")
check("a rename onto the path", read(5), A(4))
if os.path.exists(f"{d}/f4.bin"): sys.exit("the renamed file is still there")

assert read(6) == A(6)
child(f"import os; os.chmod('{d}/f6.bin', 0o600)")
with open(f"{d}/f6.bin", "rb") as f:
    m = os.fstat(f.fileno()).st_mode & 0o7777
if m != 0o600 or (os.stat(f"{d}/f6.bin").st_mode & 0o7777) != 0o600: sys.exit(f"mode after chmod: {oct(m)}")
print("ok: a chmod")

assert read(7) == A(7)
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
r = subprocess.run([sys.executable, "-c", f"open('{d}/f7.bin', 'wb').write(b'D' * 300)"], env=env)
if r.returncode: sys.exit("the direct writer failed")
check("a file written without the library", read(7), b"D" * 300)

assert read(8) == A(8)
open(f"{d}/f8.bin", "wb").write(b"S" * 77)
check("a rewrite by the reading process", read(8), b"S" * 77)

# A writer that still holds the file open: what it wrote and flushed is what a read gets.
assert read(9) == A(9)
w = subprocess.Popen([sys.executable, "-c",
    f"import sys\nf = open('{d}/f9.bin', 'wb')\nf.write(b'H' * 900)\nf.flush()\nprint('open', flush=True)\nsys.stdin.readline()\nf.close()"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
if w.stdout.readline().strip() != "open": sys.exit("the holding writer did not start")
check("a file its writer holds open", read(9), b"H" * 900)
w.stdin.write("\n"); w.stdin.flush(); w.wait()

# The same while the forwarder has not yet taken that open (stopped here: the leased open
# does not wait for it): the library stopped the links before it opened the file.
import signal, threading
fwd = int(sys.argv[4])
w = subprocess.Popen([sys.executable, "-c",
    f"import sys\nopen('{d}/first.bin', 'wb').close()\nprint('leased', flush=True)\nsys.stdin.readline()\n"
    f"f = open('{d}/f12.bin', 'wb')\nf.write(b'L' * 700)\nf.flush()\nprint('open', flush=True)\nsys.stdin.readline()\nf.close()"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
if w.stdout.readline().strip() != "leased": sys.exit("the leased writer did not start")
assert read(12) == A(12) and read(12) == A(12)  # (the second one through its link)
os.kill(fwd, signal.SIGSTOP)
try:
    w.stdin.write("\n"); w.stdin.flush()
    if w.stdout.readline().strip() != "open": sys.exit("the leased writer did not open f12")
finally:
    threading.Timer(1.0, os.kill, (fwd, signal.SIGCONT)).start()
check("a leased open the forwarder had not taken yet", read(12), b"L" * 700)
w.stdin.write("\n"); w.stdin.flush(); w.wait()

# mmap of a linked file
import mmap
assert read(10) == A(10)
with open(f"{d}/f10.bin", "rb") as f:
    mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    check("a mapping", bytes(mm[:]), A(10))
    mm.close()
    if os.fstat(f.fileno()).st_size != len(A(10)): sys.exit("fstat size of a linked file")
PYEOF
fwd=$(session_forwarders)
[[ $fwd =~ ^[0-9]+$ ]] || fail "expected one forwarder of the job, found: $fwd"
with_lib "$PY" "$T/attack.py" "$CAP" "$DIRECT" "$LIB" "$fwd" >"$T/attack.out" 2>&1 ||
  fail "in the job: $(cat "$T/attack.out")"
ok "in the job: $(grep -c '^ok:' "$T/attack.out") changes all seen at once ($(grep '^ok:' "$T/attack.out" | cut -c5- | paste -sd, -))"

# --- another job on the same store ---
# One reader process, so that nothing of this job asks the forwarder in between: it reads
# f11 (its link), another job rewrites it (that job's exit waits for its commit), and the
# reader reads it again once the store watch (every 50 ms) had the time to see it.
with_lib "$PY" -c "
import os, subprocess, sys, time
p = '$CAP/f11.bin'
assert open(p, 'rb').read() == open('$DIRECT/f11.bin', 'rb').read()
env = dict(os.environ, CKPTFWD_JOB_ID='rl-o-$$')
subprocess.run([sys.executable, '-c', f\"open('{p}', 'wb').write(b'J' * 1234)\"], env=env, check=True)
time.sleep(0.3)
got = open(p, 'rb').read()
sys.exit(0 if got == b'J' * 1234 else f'read {got[:20]!r} ({len(got)} bytes)')" ||
  fail "a rewrite by another job on the store is not seen"
ok "a rewrite by another job on the store is seen"

# --- a second node of the job ---
on_node() { env CKPTFWD_NODE_ID=$1 LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "${@:2}"; }
export CKPTFWD_JOB_ID=rl-n-$$ CKPTFWD_BATCH_WINDOW_MS=3000
on_node n0 "$PY" "$T/read_all.py" "$CAP" "$DIRECT" 40 2>/dev/null ||
  true  # (f1..f9 changed above: only the links matter here)
on_node n0 "$PY" -c "open('$CAP/f20.bin','rb').read(); open('$CAP/f21.bin','rb').read()" ||
  fail "n0 reads f20 and f21"
# n1 rewrites f20 and closes it, then waits (its exit would wait for the commit, which
# the store watch would see): n0 must read n1's bytes from n1's forwarder, not its link.
on_node n1 "$PY" -c "
import os, time
open('$CAP/f20.bin','wb').write(b'N' * 4321)
open('$T/n1.closed', 'w').close()
for _ in range(6000):  # 60 s at most
    if os.path.exists('$T/n1.go'): break
    time.sleep(0.01)" >"$T/n1.out" 2>&1 &
n1=$!
for ((i = 0; i < 1000; i++)); do [[ -e $T/n1.closed ]] && break; sleep 0.01; done
[[ -e $T/n1.closed ]] || { touch "$T/n1.go"; fail "n1's writer did not close f20: $(cat "$T/n1.out")"; }
on_node n0 "$PY" -c "
import sys
open('$CAP/f21.bin','rb').read()  # (a process's first open connects: a request anyway)
got = open('$CAP/f20.bin','rb').read()
sys.exit(0 if got == b'N' * 4321 else f'read {got[:20]!r} ({len(got)} bytes)')" ||
  { touch "$T/n1.go"; fail "n0 does not see n1's rewrite of f20"; }
touch "$T/n1.go"
wait $n1 || fail "n1's writer failed: $(cat "$T/n1.out")"
ok "a rewrite on another node of the job is seen at once"
