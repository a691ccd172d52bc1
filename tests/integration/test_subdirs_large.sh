#!/usr/bin/env bash
# Layouts real codes use: one directory per checkpoint step (ckpt/step_0001/rank_N.bin,
# created with mkdir, captured by the glob 'ckpt/*' whose '*' spans '/'), and files larger
# than a container chunk (4 MiB: a 9 MiB file spans three chunks), all in one store
# (CKPTFWD_STORE outside the captured tree). Restore keeps the
# subdirectories (relative to the common prefix); readdir of a step directory under the
# library lists its files; the large file reads back identical through the library.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
# The default store is per directory (step_0001/.ckptfwd, ...); a job script with step
# directories names one store for all of them.
export CKPTFWD_STORE=$T/store
STORE=$CKPTFWD_STORE

for d in "$DIRECT" "$CAP"; do
  run=(); [[ $d == "$CAP" ]] && run=(env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE")
  for step in step_0001 step_0002; do
    mkdir -p "$d/$step"
    timeout 120 "${run[@]}" mpiexec.mpich -n 2 "$WRITER" write "$d/$step" --no-fsync >"$T/w.out" 2>&1 ||
      fail "writing $d/$step failed: $(tail -5 "$T/w.out")"
  done
  "${run[@]}" "$WRITER" big "$d/large.bin" 9M 2>"$T/w.err" || fail "writing $d/large.bin failed: $(cat "$T/w.err")"
done
[[ ! -f "$CAP/step_0002/posix_r1.bin" ]] || fail "files in a subdirectory of the glob were not captured"
[[ ! -f "$CAP/large.bin" ]] || fail "large.bin was not captured"
ok "two step directories of 16 files each and a 9 MiB file written"

with_lib cmp "$CAP/large.bin" "$DIRECT/large.bin" || fail "large.bin through the library differs"
ok "the 9 MiB file reads back identical through the library"

drain
restore_store "$STORE" "$OUT"
(cd "$DIRECT" && find . -type f | sort) >"$T/tree.direct"
(cd "$OUT" && find . -type f | sort) >"$T/tree.out"
diff "$T/tree.direct" "$T/tree.out" >/dev/null || fail "restored tree differs from the direct run: $(diff "$T/tree.direct" "$T/tree.out" | head -8)"
while read -r rel; do
  assert_same_bytes "$DIRECT/$rel" "$OUT/$rel" "restored $rel"
done <"$T/tree.direct"
ok "restore recreates step_0001/, step_0002/ and large.bin byte-identical ($(wc -l <"$T/tree.direct") files)"

# Last, so the restore result above is known even when this fails.
"$WRITER" list "$DIRECT/step_0002" >"$T/list.direct"
with_lib "$WRITER" list "$CAP/step_0002" >"$T/list.lib" 2>&1 || fail "readdir of $CAP/step_0002 failed: $(cat "$T/list.lib")"
diff "$T/list.direct" "$T/list.lib" >/dev/null || fail "readdir of a step directory differs: $(diff "$T/list.direct" "$T/list.lib" | head -5)"
"$WRITER" list "$DIRECT" >"$T/top.direct"
with_lib "$WRITER" list "$CAP" >"$T/top.lib" 2>&1 || fail "readdir of $CAP failed"
diff "$T/top.direct" "$T/top.lib" >/dev/null || fail "readdir of the top directory differs: $(diff "$T/top.direct" "$T/top.lib" | head -5)"
ok "readdir of the top and the step directories through the library match the direct run"
