#!/usr/bin/env bash
# The write patterns of real checkpoint code (bench_patterns: write, scattered pwrite,
# fwrite, writev, an O_APPEND reopen, ofstream, ftruncate + pwrite + rename from a
# temporary name, mmap, O_DIRECT, copy_file_range from a file outside the capture) under
# the library, each by its own plain process, without and with fsync: the writer's
# read-back exact, and the store restores what the same process leaves without the
# library. The file is 1 MiB + 12,345 bytes (pieces that do not end on page edges).
# copy_file_range from a disk file into a staged one used to fail with EXDEV (the staged
# file lives on /dev/shm), where the call without the library copies.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
ckf_stage_on_tmpfs  # (the default staging directory: another file system than $T)
BP=$BUILD/bin/bench_patterns
[[ -x $BP ]] || fail "bench_patterns not built"
SIZE=$((1048576 + 12345))
SRC=$T/source.dat  # on the disk, as $CAP: copy_file_range within one file system directly
for fs in "" --fsync; do
  for p in $("$BP" --list | cut -f1); do
    rm -f "$DIRECT/$p.dat"
    "$BP" --dir "$DIRECT" --pattern "$p" --size "$SIZE" --source "$SRC" $fs >"$T/direct.out" ||
      fail "$p $fs fails without the library: $(cat "$T/direct.out")"
    grep -q "n/a=" "$T/direct.out" && continue
    with_lib "$BP" --dir "$CAP" --pattern "$p" --size "$SIZE" --source "$SRC" $fs >"$T/lib.out" 2>&1 ||
      fail "$p $fs under the library: $(tail -3 "$T/lib.out")"
    ! grep -q "n/a=" "$T/lib.out" || fail "$p $fs refused under the library: $(cat "$T/lib.out")"
  done
  restore_store "$STORE" "$OUT"
  assert_restored_tree "$DIRECT" "$CAP" "$OUT"
  rm -rf "$OUT" && mkdir -p "$OUT"
  ok "every pattern ${fs:-without fsync}: the writer read its bytes back, the store restores the direct run's files"
done
