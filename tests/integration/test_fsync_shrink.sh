#!/usr/bin/env bash
# A new file fsync'd, cut shorter, written and fsync'd again, then closed: each fsync
# commits the node's one staged copy of the file as a `create` record, and the later one
# must replace the earlier, so the store gives the file back at its final size (it gave the
# first fsync's larger size before). Checked by `ckptfwd restore` and by a read through the
# library in a new job; `ckptfwd verify` clean.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

CAP=$T/ckpt
mkdir -p "$CAP"
CAPTURE="$CAP/*"
cat >"$T/writer.py" <<'PY'
import os, sys
path, want = sys.argv[1:3]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"A" * 100000); os.fsync(fd)
os.ftruncate(fd, 50000); os.lseek(fd, 0, 0); os.write(fd, b"B" * 1000); os.fsync(fd)
os.close(fd)
with open(want, "wb") as w:
    w.write(b"B" * 1000 + b"A" * 49000)
PY
with_lib /usr/bin/python3 "$T/writer.py" "$CAP/f.bin" "$T/want.bin" || fail "the writer failed"
drain
"$CLI" verify "$CAP/.ckptfwd" >"$T/verify.out" 2>&1 || fail "verify: $(cat "$T/verify.out")"
OUT=$T/restored
restore_store "$CAP/.ckptfwd" "$OUT"
r=$(restored_file "$OUT" "$CAP/f.bin")
[[ -n "$r" ]] || fail "restore did not give f.bin"
assert_same_bytes "$T/want.bin" "$r" "f.bin restored after two fsyncs with a shrink between"
export CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-restart"
with_lib /usr/bin/python3 -c "import shutil,sys; shutil.copyfile(sys.argv[1], sys.argv[2])" \
  "$CAP/f.bin" "$T/read.bin" || fail "reading f.bin through the library failed"
assert_same_bytes "$T/want.bin" "$T/read.bin" "f.bin read back through the library"
ok "a new file that shrank between two fsyncs comes back at its final size"
