#!/usr/bin/env bash
# The library grows the process's descriptor table past its own descriptors (900 and up)
# when it loads: growing it at the first open instead, in a process with threads (an MPI
# rank's), made the kernel wait for an RCU grace period, 10-15 ms of the first
# checkpoint's open. The kernel shows the table's size as FDSize in /proc/PID/status.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

CAPTURE="$T/ckpt/*"
fdsize='import re; print(re.search(r"FDSize:\s*(\d+)", open("/proc/self/status").read()).group(1))'
without=$(/usr/bin/python3 -c "$fdsize") || fail "python failed"
with=$(with_lib /usr/bin/python3 -c "$fdsize") || fail "python under the library failed"
[[ "$without" -lt 900 ]] || skip "the descriptor table is already $without entries without the library"
[[ "$with" -gt 900 ]] || fail "FDSize under the library is $with (without: $without): not grown at load"
# Not when the library captures nothing.
off=$(env LD_PRELOAD="$LIB" /usr/bin/python3 -c "$fdsize") || fail "python failed"
[[ "$off" -eq "$without" ]] || fail "FDSize is $off with nothing captured (without the library: $without)"
ok "the descriptor table is grown at load ($without -> $with entries), only when capturing"
