#!/usr/bin/env bash
# Leased opens (src/wire/lease.h) as a script uses them: a Python process writing many small
# files opens every one after its first on a lease (stats leased_opens), also after it
# execs a shell that writes more (the lease goes along in CKPTFWD_ADOPT_LEASE); another
# process reading and stat-ing a file right after its writer opened it sees it; every
# byte is as a run without the library leaves it, read back by a new job. With
# CKPTFWD_LEASED_OPEN=0 no open is leased, and an MPI rank (PMI_RANK set) takes none.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=60
PY=/usr/bin/python3
cat >"$T/w.py" <<'PYEOF'
import os, subprocess, sys
d = sys.argv[1]
for i in range(50):
    with open(f"{d}/f{i}.bin", "wb") as f:
        f.write((b"%06d" % i) * (100 + i))
# Another process looks right after the open returned (it must find the new file).
f = open(f"{d}/seen.bin", "wb")
out = subprocess.run(["stat", "-c", "%s", f"{d}/seen.bin"], capture_output=True, text=True)
if out.returncode != 0 or out.stdout.strip() != "0":
    sys.exit(f"another process did not see the open file: {out.returncode} {out.stdout!r} {out.stderr!r}")
f.write(b"seen" * 1000)
f.close()
os.execv("/bin/sh", ["sh", "-c", f'for i in 1 2 3 4 5; do echo "line $i" > {d}/e$i.txt; done'])
PYEOF
leased() { timeout 30 "$CLI" stats --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["leased_opens"])'; }

"$PY" "$T/w.py" "$DIRECT" || fail "the direct run failed"
with_lib "$PY" "$T/w.py" "$CAP" || fail "the run under the library failed: $(tail -3 "$CKPTFWD_LOG")"
n=$(leased)
# 49 files after the first, seen.bin, and 5 after the exec (the first of those too: the
# lease went along).
[[ $n -ge 55 ]] || fail "only $n of the script's 56 write opens were leased"
ok "$n write opens leased, those after the exec included"
drain
assert_read_back_by_new_job

mkdir -p "$CAP/off" "$CAP/rank" "$DIRECT/off"
before=$(leased)
CKPTFWD_LEASED_OPEN=0 with_lib "$PY" "$T/w.py" "$CAP/off" || fail "the run with leases off failed"
PMI_RANK=0 PMI_SIZE=1 with_lib "$PY" "$T/w.py" "$CAP/rank" || fail "the run as a rank failed"
[[ $(leased) == "$before" ]] ||
  fail "CKPTFWD_LEASED_OPEN=0 or an MPI rank still took leases ($before, then $(leased))"
ok "no leases with CKPTFWD_LEASED_OPEN=0, nor for an MPI rank"

# A leased open tells the forwarder when it found no file at the path ("new": the forwarder
# does not look again); a real file already there keeps its mode when a lease rewrites it,
# and a new file gets the mode the umask leaves, as without the library.
cat >"$T/modes.py" <<'PYEOF'
import os, sys
d = sys.argv[1]
os.umask(0o027)
for i in range(3):  # the first takes the usual OPEN; the lease comes with its CLOSE
    with open(f"{d}/m{i}.bin", "wb") as f:
        f.write(b"m" * 100)
with open(f"{d}/pre.bin", "wb") as f:
    f.write(b"rewritten on a lease")
PYEOF
mkdir -p "$CAP/modes" "$DIRECT/modes"
for d in "$CAP/modes" "$DIRECT/modes"; do
  echo "there before" >"$d/pre.bin" && chmod 604 "$d/pre.bin"
done
before=$(leased)
"$PY" "$T/modes.py" "$DIRECT/modes" || fail "the direct run of modes.py failed"
with_lib "$PY" "$T/modes.py" "$CAP/modes" || fail "modes.py under the library failed"
[[ $(leased) -ge $((before + 3)) ]] || fail "modes.py's opens were not leased ($before, then $(leased))"
drain
for f in m0.bin m2.bin pre.bin; do
  want=$(stat -c %a "$DIRECT/modes/$f")
  got=$(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-modes" \
    stat -c %a "$CAP/modes/$f")
  [[ $got == "$want" ]] || fail "$f has mode $got through the library, $want without it"
  env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-modes" \
    cat "$CAP/modes/$f" >"$T/readback"
  assert_same_bytes "$DIRECT/modes/$f" "$T/readback" "modes/$f read back by a new job"
done
ok "a leased rewrite keeps the file's mode (604), a leased new file gets the umask's (640)"
