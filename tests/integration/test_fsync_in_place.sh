#!/usr/bin/env bash
# fsync of files larger than CKPTFWD_SNAPSHOT_READ_MAX (1M here): compressed from the staged
# file in place, with no copy, unless the bytes could change unseen. Three files from one
# program under the library:
#   plain.bin   written, fsync'd, more written, closed: committed in place (fsync_in_place)
#   mapped.bin  also written through a shared writable mapping the writer keeps while it
#               fsyncs: its writes would be invisible to the in-place checks, so the
#               snapshot is copied (fsync_copies)
#   busy.bin    rewritten by a second thread all through its fsync: committed in place
#               or, when the checks see the writes, from a copy; either way consistent
# Each restores (`ckptfwd restore`, every hash checked) to what the program wrote last,
# `ckptfwd verify` finds every container sound, and the counters say which way each went.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
export CKPTFWD_SNAPSHOT_READ_MAX=1M CKPTFWD_LOG_LEVEL=debug
cat >"$T/writer.py" <<'PY'
import mmap, os, sys, threading
cap, want = sys.argv[1:3]
MB = 1 << 20
def block(seed, n):
    return bytes((seed * 7 + i * 13) & 0xFF for i in range(256)) * (n // 256)
def save(name, data):
    with open(os.path.join(want, name), "wb") as w:
        w.write(data)

fd = os.open(os.path.join(cap, "plain.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
a = block(1, 6 * MB)
os.write(fd, a); os.fsync(fd)
b = block(2, MB)
os.write(fd, b); os.close(fd)
save("plain.bin", a + b)

fd = os.open(os.path.join(cap, "mapped.bin"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
c = bytearray(block(3, 4 * MB))
os.write(fd, bytes(c))
m = mmap.mmap(fd, len(c), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[MB:MB + 4] = b"MAPD"; c[MB:MB + 4] = b"MAPD"
os.fsync(fd)
m.close(); os.close(fd)
save("mapped.bin", bytes(c))

fd = os.open(os.path.join(cap, "busy.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, block(4, 3 * MB))
stop = False
last = [b""]
def rewrite():
    gen = 5
    while not stop:
        d = block(gen, 3 * MB)
        os.pwrite(fd, d, 0)
        last[0] = d
        gen += 1
t = threading.Thread(target=rewrite); t.start()
os.fsync(fd)
stop = True; t.join()
os.close(fd)
save("busy.bin", last[0])
PY
mkdir -p "$T/want"
with_lib /usr/bin/python3 "$T/writer.py" "$CAP" "$T/want" || fail "the writer failed"
drain
"$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "verify: $(cat "$T/verify.out")"
restore_store "$STORE" "$OUT"
for f in plain.bin mapped.bin busy.bin; do
  r=$(restored_file "$OUT" "$CAP/$f")
  [[ -n "$r" ]] || fail "restore did not give $f"
  assert_same_bytes "$T/want/$f" "$r" "$f restored"
done
# The counters reach the stats file when the forwarder leaves (idle exit, 2 s).
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "the forwarder did not leave"
in_place=$(stats_sum "$T/stats.jsonl" forwarder fsync_in_place)
copies=$(stats_sum "$T/stats.jsonl" forwarder fsync_copies)
# plain.bin in place; mapped.bin copied; busy.bin one or the other.
[[ $((in_place + copies)) -eq 3 ]] || fail "fsync_in_place $in_place + fsync_copies $copies: want 3 snapshots"
[[ $in_place -ge 1 ]] || fail "fsync_in_place is $in_place: plain.bin was not committed in place"
[[ $copies -ge 1 ]] || fail "fsync_copies is $copies: mapped.bin (mapped writable) was not copied"
grep -q "mapped.bin): a writer maps it shared and writable: copying it" "$CKPTFWD_LOG" ||
  fail "mapped.bin was not copied for its fsync (log: $CKPTFWD_LOG)"
grep -q "plain.bin changed while" "$CKPTFWD_LOG" && fail "plain.bin seen changing while nothing wrote it"
ok "fsync of files over CKPTFWD_SNAPSHOT_READ_MAX: in place ($in_place), copied where a writer maps the file ($copies), all restore exactly"
