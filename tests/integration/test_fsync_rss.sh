#!/usr/bin/env bash
# The forwarder's memory stays bounded while it commits an fsync of a large file in place
# (a file over CKPTFWD_SNAPSHOT_READ_MAX, 128 MiB by default, is compressed from the staged
# file, its pages given back as they are read): a 384 MiB file fsync'd keeps the
# forwarder's peak RSS under 256 MiB (it counts the mapped pages of the staged file that
# are resident at once), the snapshot is committed in place, and it restores exactly.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
cat >"$T/writer.py" <<'PY'
import hashlib, os, sys
path, want = sys.argv[1:3]
block = bytes((i * 131 + (i >> 8)) & 0xFF for i in range(1 << 20))
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
h = hashlib.sha256()
for k in range(384):
    b = block[k % 256:] + block[:k % 256]  # every MiB another rotation
    os.write(fd, b)
    h.update(b)
os.fsync(fd)
os.close(fd)
open(want, "w").write(h.hexdigest())
PY
with_lib /usr/bin/python3 "$T/writer.py" "$CAP/big.bin" "$T/want.sha" || fail "the writer failed"
drain
restore_store "$STORE" "$OUT"
r=$(restored_file "$OUT" "$CAP/big.bin")
[[ -n "$r" ]] || fail "restore did not give big.bin"
[[ "$(sha "$r")" == "$(cat "$T/want.sha")" ]] || fail "big.bin restored with other bytes"
rm -f "$r"
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "the forwarder did not leave"
in_place=$(stats_sum "$T/stats.jsonl" forwarder fsync_in_place)
[[ $in_place -eq 1 ]] || fail "fsync_in_place is $in_place: the 384 MiB file was not committed in place"
rss=$(stats_sum "$T/stats.jsonl" forwarder peak_rss_bytes)
[[ $rss -gt 0 ]] || fail "peak_rss_bytes is 0"
# A sanitizer build's RSS holds its shadow memory and the quarantine of freed blocks
# (hundreds of MiB): the bound speaks for the release build only.
if grep -q "^CKPTFWD_SANITIZE:BOOL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null; then
  ok "sanitizer build: peak RSS $((rss >> 20)) MiB not checked against the bound"
else
  [[ $rss -lt $((256 << 20)) ]] ||
    fail "forwarder peak RSS $((rss >> 20)) MiB committing a 384 MiB fsync in place (want < 256 MiB)"
fi
ok "384 MiB fsync'd and committed in place with the forwarder at $((rss >> 20)) MiB peak RSS; restores exactly"
