#!/usr/bin/env bash
# The forwarder is killed with SIGKILL while a script writes a file it opened on a lease
# (src/wire/lease.h: the open returned before the forwarder acted on it, and the version
# has no description in staging until its CLOSE, only its .meta saying "lease"). The
# library starts a new forwarder, whose recovery leaves that staged file be; the close
# then finds no such version, and the library writes the bytes to the real path from it.
# What must hold: every call succeeds, the file has every byte (at its real path, the
# fallback), and the files written before the kill read back whole. When the recovery
# took the lease's .meta for none it dropped the staged file: the close failed with EIO
# and the bytes were gone. The same run with CKPTFWD_LEASED_OPEN=0 keeps the file staged
# (the recovery finds its .meta): the test tells the two apart.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30

cat >"$T/writer.py" <<'EOF'
import os, sys, time
d, gate = sys.argv[1], sys.argv[2]
with open(f"{d}/first.bin", "wb") as f:  # its CLOSE's reply hands a lease over
    f.write(b"a" * 4096)
f = open(f"{d}/second.bin", "wb")  # opened on that lease
f.write(b"b" * 1000000)
f.flush()
print("paused", flush=True)
while not os.path.exists(gate):
    time.sleep(0.01)
f.write(b"c" * 1000000)
f.close()
with open(f"{d}/third.bin", "wb") as f:  # after the new forwarder's start
    f.write(b"d" * 8192)
print("done", flush=True)
EOF
/usr/bin/python3 - "$DIRECT" <<'EOF'
import sys
d = sys.argv[1]
open(f"{d}/first.bin", "wb").write(b"a" * 4096)
open(f"{d}/second.bin", "wb").write(b"b" * 1000000 + b"c" * 1000000)
open(f"{d}/third.bin", "wb").write(b"d" * 8192)
EOF

run_case() {  # name leased(0|1)
  local name=$1 leased=$2
  local dir=$CAP/$name
  mkdir -p "$dir"
  CKPTFWD_LEASED_OPEN=$leased with_lib /usr/bin/python3 "$T/writer.py" "$dir" "$T/gate-$name" \
    >"$T/$name.out" 2>&1 &
  kill_at_pause "$name" $! paused
  ok "$name: every call succeeded after the kill"
  for f in first.bin second.bin third.bin; do
    with_lib cat "$dir/$f" >"$T/readback"
    assert_same_bytes "$DIRECT/$f" "$T/readback" "$name: $f read back through the library"
  done
  ok "$name: all three files read back whole"
}

run_case leased 1
# The leased file went to its real path (the fallback at its close), with every byte.
assert_same_bytes "$DIRECT/second.bin" "$CAP/leased/second.bin" "leased: the real second.bin"
grep -q "it lost the version.*leased/second.bin directly" "$CKPTFWD_LOG" ||
  fail "leased: no fallback of second.bin logged: $(tail -5 "$CKPTFWD_LOG")"
ok "leased: second.bin written to its real path from the staged file the recovery left"

run_case unleased 0
[[ ! -e "$CAP/unleased/second.bin" ]] ||
  fail "unleased: second.bin is at its real path; a recovered open version stays staged"
ok "unleased: second.bin recovered as an open version and kept in staging (no fallback)"
