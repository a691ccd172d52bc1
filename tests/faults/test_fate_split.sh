#!/usr/bin/env bash
# One fate per captured path per node and job (src/wire/fate.h). Two processes write
# disjoint halves of one captured file (fault_writer --open shared, bytes [0,4M) and
# [4M,8M)); one of them falls back to direct writes. What must hold: the file is whole
# in one place (on disk here), never half on disk and half in the store; each process's
# log line names the fallback once; a process that cannot follow the fate gets an error.
#   A: the first writer cannot reach any forwarder (CKPTFWD_NO_SPAWN=1, none running);
#      the second starts one: it must write directly too.
#   B: a forwarder is up; the first writer is made to behave as unreachable (test-only
#      switch CKPTFWD_TEST_FALLBACK_PID); the second, served by the forwarder, follows.
#   C: the second writer stages first and keeps the file open; the writer made
#      unreachable then cannot write directly beside it: its open fails with EIO, and the
#      staged writer's bytes are committed (no direct copy appears).
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
export CKPTFWD_IDLE_EXIT=30

"$FW" "$DIRECT/whole.dat" 8M >/dev/null || fail "direct run failed"

# as_fallback CMD...: runs CMD under the library as the process the test switch names.
as_fallback() {
  with_lib bash -c 'CKPTFWD_TEST_FALLBACK_PID=$$ exec "$@"' as_fallback "$@"
}

# halves NAME FIRST_WRAPPER: first half by FIRST_WRAPPER (paused at 2M while the second
# half is written by a plain library process), then the first half finishes.
halves() {
  local name=$1 first=$2 rc
  rm -f "$T/gate.$name"
  "$first" "$FW" "$CAP/$name" 4M --open shared --pause-at 2M "$T/gate.$name" >"$T/$name.1.out" 2>&1 &
  local p1=$!
  wait_line "$T/$name.1.out" "paused at 2097152"
  with_lib "$FW" "$CAP/$name" 8M --open shared --from 4M >"$T/$name.2.out" 2>&1 ||
    fail "$name: second writer failed: $(cat "$T/$name.2.out")"
  touch "$T/gate.$name"
  rc=0
  wait "$p1" || rc=$?
  [[ $rc -eq 0 ]] || fail "$name: first writer failed ($rc): $(cat "$T/$name.1.out")"
}

# exact_on_disk NAME: the real file is whole and the store holds no other copy of it.
exact_on_disk() {
  local name=$1
  [[ -f "$CAP/$name" && ! -L "$CAP/$name" ]] || fail "$name: no real file on disk"
  assert_same_bytes "$DIRECT/whole.dat" "$CAP/$name" "$name on disk"
  [[ -z "$(session_forwarders)" ]] || drain
  if [[ -d "$STORE" ]] && "$CLI" ls "$STORE" 2>/dev/null | grep -q "$name"; then
    fail "$name: the store holds a second copy: $("$CLI" ls "$STORE" | grep "$name")"
  fi
  local seen
  seen=$(with_lib cat "$CAP/$name" | sha256sum | cut -d' ' -f1)
  [[ $seen == "$(sha "$DIRECT/whole.dat")" ]] || fail "$name: a read through the library differs"
}

# once TEXT NAME: the log has exactly one line with TEXT about NAME.
once() {
  local n
  n=$(grep -F "$1" "$CKPTFWD_LOG" | grep -cF "$2" || true)
  [[ $n -eq 1 ]] || fail "expected one log line '$1' for $2, found $n: $(grep -F "$2" "$CKPTFWD_LOG")"
}

# A
no_spawn() { CKPTFWD_NO_SPAWN=1 with_lib "$@"; }
halves a.dat no_spawn
exact_on_disk a.dat
once "forwarder unreachable" "a.dat directly"
once "another process of this node writes it directly" "a.dat directly"
ok "A: unreachable first writer, second follows it: a.dat exact on disk, nothing in the store"

# B (the forwarder of A is still up: the second writer reaches it)
[[ -n "$(session_forwarders)" ]] || timeout 60 "$FWD" --daemon || fail "forwarder --daemon failed"
halves b.dat as_fallback
exact_on_disk b.dat
once "test switch CKPTFWD_TEST_FALLBACK_PID" "b.dat directly"
once "another process of this node writes it directly" "b.dat directly"
ok "B: test-switch fallback with a live forwarder, second follows it: b.dat exact on disk"

# C
rm -f "$T/gate.c"
with_lib "$FW" "$CAP/c.dat" 8M --open shared --from 4M --pause-at 6M "$T/gate.c" >"$T/c.2.out" 2>&1 &
p2=$!
wait_line "$T/c.2.out" "paused at 6291456"
rc=0
as_fallback "$FW" "$CAP/c.dat" 4M --open shared >"$T/c.1.out" 2>&1 || rc=$?
touch "$T/gate.c"
wait "$p2" || fail "C: the staged writer failed: $(cat "$T/c.2.out")"
[[ $rc -eq 3 ]] && grep -q "^open .*c.dat: Input/output error" "$T/c.1.out" ||
  fail "C: the unreachable writer's open did not fail with EIO (exit $rc): $(cat "$T/c.1.out")"
[[ ! -e "$CAP/c.dat" ]] || fail "C: a direct copy of c.dat appeared beside the staged one"
grep -q "ERROR: cannot open $CAP/c.dat" "$CKPTFWD_LOG" || fail "C: the refused open is not logged"
drain
cmp <(with_lib cat "$CAP/c.dat" | tail -c 4194304) <(tail -c 4194304 "$DIRECT/whole.dat") ||
  fail "C: the staged writer's half of c.dat is not what it wrote"
ok "C: the writer that could not follow the staged fate got EIO; one copy (the store's)"
