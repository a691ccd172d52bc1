#!/usr/bin/env bash
# A directory holding 2000 captured files with long names (their LIST reply is larger than
# the 64 KiB control frame and has far more than 64 fields) lists completely through the
# library: `ls` and Python's os.listdir show every name, as without the library.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
export CKPTFWD_BATCH_WINDOW_MS=500
DIRECT=$T/direct
CAP=$T/ckpt
mkdir -p "$DIRECT" "$CAP"
CAPTURE="$CAP/*"
N=2000
MAKE='import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, "checkpoint_rank_%05d_of_a_long_simulation_run.bin" % i), "wb") as f:
        f.write(b"%d" % i)'
/usr/bin/python3 -c "$MAKE" "$DIRECT" "$N" || fail "direct run failed"
with_lib /usr/bin/python3 -c "$MAKE" "$CAP" "$N" || fail "run under the library failed"
real=$(find "$CAP" -maxdepth 1 -type f | wc -l)
[[ $real -eq 0 ]] || fail "$real files were written as real files, not captured"
(cd "$DIRECT" && ls) >"$T/ls.direct"
with_lib ls "$CAP" >"$T/ls.lib" || fail "ls through the library failed"
diff "$T/ls.direct" "$T/ls.lib" >"$T/ls.diff" ||
  fail "ls through the library lists $(wc -l <"$T/ls.lib") names, the direct run $(wc -l <"$T/ls.direct"): $(head -5 "$T/ls.diff")"
n=$(with_lib /usr/bin/python3 -c 'import os, sys; print(len([n for n in os.listdir(sys.argv[1]) if n != ".ckptfwd"]))' "$CAP")
[[ $n -eq $N ]] || fail "os.listdir through the library sees $n names, want $N"
drain
# After the commit the names come from the catalog: still complete.
with_lib ls "$CAP" >"$T/ls.lib2" || fail "ls after the commit failed"
diff -q "$T/ls.direct" "$T/ls.lib2" >/dev/null || fail "after the commit ls lists $(wc -l <"$T/ls.lib2") names, want $N"
ok "$N captured names (~$(wc -c <"$T/ls.direct") bytes) listed completely by ls and os.listdir, staged and committed"
