#!/usr/bin/env bash
# fork safety (the library must be fork safe): a captured fd shared across fork() (child writes
# through the inherited descriptor and leaves with _exit), a forked child creating its own
# captured file, fork+exec of a shell, and a multiprocessing pool whose workers end with
# _exit (so only the library's _exit hook can hand their files over). The program must
# succeed, and every file read through the library and restored must equal the direct run.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

HERE=$(cd "$(dirname "$0")" && pwd)
ckf_std_dirs

timeout 60 /usr/bin/python3 "$HERE/fork_writer.py" "$DIRECT" >/dev/null || fail "fork_writer.py failed without the library"
timeout 60 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" /usr/bin/python3 "$HERE/fork_writer.py" "$CAP" >"$T/fw.out" 2>&1 ||
  fail "fork_writer.py failed under the library: $(tail -5 "$T/fw.out")"
grep -q 'fork_writer: ok' "$T/fw.out" || fail "fork_writer.py printed: $(cat "$T/fw.out")"
ok "fork, fork+exec and a multiprocessing pool ran under the library"

for f in "$DIRECT"/*; do
  name=$(basename "$f")
  [[ ! -f "$CAP/$name" ]] || fail "$name is a regular file on disk: not captured"
  with_lib cmp "$CAP/$name" "$f" 2>"$T/cmp.err" || fail "$name through the library differs from the direct run: $(cat "$T/cmp.err")"
done
[[ "$(with_lib cat "$CAP/shared.txt")" == $'parent-1\nchild-part\nparent-2' ]] ||
  fail "shared.txt reads '$(with_lib cat "$CAP/shared.txt")' through the library"
ok "all $(ls "$DIRECT" | wc -l) files read back identical through the library"

drain
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "restore equals the direct run"
