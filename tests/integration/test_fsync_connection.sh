#!/usr/bin/env bash
# fsync waits for its commit on a connection of its own (the other threads' opens and
# closes go on meanwhile); the process's main connection must stay the one that holds its
# open files. A process writes a file, fsyncs it, writes more, closes it, and stays alive
# while `ckptfwd drain` runs: the close must have reached the forwarder on the connection
# that opened the file, so the drain commits the whole file (restore byte-exact), not
# only the part fsync committed. Two threads then fsync and write other files at the same
# time: every file restores byte-exact.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

CAP=$T/ckpt
mkdir -p "$CAP" "$T/want"
CAPTURE="$CAP/*"
cat >"$T/writer.py" <<'PY'
import os, sys, threading, time
cap, want, ready = sys.argv[1:4]
def put(name, parts):
    fd = os.open(os.path.join(cap, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for i, p in enumerate(parts):
        os.write(fd, p)
        if i == 0:
            os.fsync(fd)
    os.close(fd)
    with open(os.path.join(want, name), "wb") as w:
        w.write(b"".join(parts))
put("one.bin", [os.urandom(1000), os.urandom(3000)])
def worker(k):
    for j in range(5):
        put(f"t{k}_{j}.bin", [os.urandom(2000 + k), os.urandom(500 + j)])
ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
for t in ts: t.start()
for t in ts: t.join()
open(ready, "w").close()
time.sleep(30)  # alive while the test drains: nothing may wait for our exit
PY
with_lib /usr/bin/python3 "$T/writer.py" "$CAP" "$T/want" "$T/ready" >"$T/write.out" 2>&1 &
WPID=$!
wait_for '[[ -e "$T/ready" ]]' 60 || fail "the writer did not finish its files: $(tail -5 "$T/write.out")"
drain
OUT=$T/restored
restore_store "$CAP/.ckptfwd" "$OUT"
kill "$WPID" 2>/dev/null || true
wait "$WPID" 2>/dev/null || true
for f in "$T/want"/*; do
  name=$(basename "$f")
  r=$(restored_file "$OUT" "$CAP/$name")
  [[ -n "$r" ]] || fail "restore did not give $name"
  assert_same_bytes "$f" "$r" "$name (fsync, more writes, close, drain while the writer lives)"
done
ok "every fsync'd file restores byte-exact while its writer still runs"
