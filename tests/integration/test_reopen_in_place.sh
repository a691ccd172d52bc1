#!/usr/bin/env bash
# A process that reopens a file it closed moments ago (O_APPEND in two opens, an ofstream
# closed then reopened to fsync) writes on the same staged file, no copy of its bytes
# (Service::reopen_in_place, stats reopens_in_place), and only then: not after an fsync,
# not when another process reopens it, not while another node may wait for its commit (the
# close-to-open journal names it, without a forwarder group). Every byte is as a run without the library leaves
# it, also when the process is killed while the reopened file is open (kept as written).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=60 CKPTFWD_BATCH_WINDOW_MS=5000 CKPTFWD_WAVE_WINDOW_MS=5000
PY=/usr/bin/python3
cat >"$T/w.py" <<'PYEOF'
import os, signal, sys
what, d = sys.argv[1], sys.argv[2]
blob = lambda tag, n: (tag * (n // len(tag) + 1))[:n]
f = f"{d}/{what}.dat"
if what in ("append", "nogroup"):  # the O_APPEND reopen: 1 MiB + 1 MiB
    with open(f, "wb") as fh: fh.write(blob(b"first-", 1 << 20))
    with open(f, "ab") as fh: fh.write(blob(b"second+", 1 << 20))
elif what == "rw":  # reopened read-write: a patch in the middle, read back before the close
    with open(f, "wb") as fh: fh.write(blob(b"base.", 300000))
    with open(f, "r+b") as fh:
        fh.seek(1000); fh.write(b"PATCH" * 100)
        fh.seek(0); assert fh.read(1000) == blob(b"base.", 1000)
elif what == "synced":  # fsynced before its close: not reopened in place
    with open(f, "wb") as fh:
        fh.write(blob(b"sync", 500000)); fh.flush(); os.fsync(fh.fileno())
    with open(f, "ab") as fh: fh.write(b"tail")
elif what == "first":  # closed here, reopened by another process ("other")
    with open(f"{d}/shared.dat", "wb") as fh: fh.write(blob(b"one", 100000))
elif what == "other":
    with open(f"{d}/shared.dat", "ab") as fh: fh.write(blob(b"two", 100000))
elif what == "killed":  # killed while the reopened file is open: kept as written
    with open(f, "wb") as fh: fh.write(blob(b"before", 700000))
    fh = open(f, "ab", buffering=0)
    fh.write(blob(b"after", 50000))
    os.kill(os.getpid(), signal.SIGKILL)
PYEOF
run_both() {  # WHAT: once directly, once under the library
  "$PY" "$T/w.py" "$1" "$DIRECT"
  with_lib "$PY" "$T/w.py" "$1" "$CAP"
}
reopens() { timeout 30 "$CLI" stats --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["reopens_in_place"])'; }

run_both append || fail "append"
[[ $(reopens) == 1 ]] || fail "the O_APPEND reopen by the process that closed the file was not done in place ($(reopens))"
ok "an O_APPEND reopen of a file the process just closed writes on its staged file"
run_both rw || fail "rw"
[[ $(reopens) == 2 ]] || fail "the read-write reopen was not done in place ($(reopens))"
ok "a read-write reopen reads and patches the staged bytes in place"
run_both synced || fail "synced"
run_both first && run_both other || fail "first/other"
[[ $(reopens) == 2 ]] || fail "a reopen after an fsync, or by another process, was done in place ($(reopens))"
ok "not in place after an fsync, nor for another process"
{ ("$PY" "$T/w.py" killed "$DIRECT") || true; } 2>/dev/null  # (SIGKILL: 137)
{ (with_lib "$PY" "$T/w.py" killed "$CAP") || true; } 2>/dev/null
[[ $(reopens) == 3 ]] || fail "the killed process's reopen was not in place ($(reopens))"
drain
# Without a forwarder group the close is noted in the store's close-to-open journal for
# other nodes' opens: they wait for its commit, which a reopen in place would put off
# until the next close. Reopened by a copy then.
export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-nogroup CKPTFWD_GROUP=0
run_both nogroup || fail "nogroup"
[[ $(reopens) == 0 ]] || fail "a version the close-to-open journal names was reopened in place"
ok "not in place while the close-to-open journal names the version"
drain
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "every file restored as the run without the library left it, the killed process's too"
