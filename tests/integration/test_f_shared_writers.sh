#!/usr/bin/env bash
# Concurrent writers of one captured file (MPI-IO N->1 style, without MPI): 4 processes
# open the same file at the same time, pwrite disjoint blocks and close; process 0 also
# opens it a second time and writes one more block through that fd. Every block must be
# in the file read through the library and in `ckptfwd restore`, identical to the direct
# run (before the forwarder shared one version between writers, the last closer's
# version won and the other blocks were zeros).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
N=4

# writer.py DIR RANK N: the barriers (files in DIR/.sync) keep all opens overlapping.
cat >"$T/writer.py" <<'PY'
import os, sys, time
d, rank, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
B = 65536
sync = os.path.join(os.path.dirname(d), "sync-" + os.path.basename(d))
os.makedirs(sync, exist_ok=True)
def barrier(tag):
    open(os.path.join(sync, f"{tag}.{rank}"), "w").close()
    for _ in range(3000):
        if all(os.path.exists(os.path.join(sync, f"{tag}.{r}")) for r in range(n)):
            return
        time.sleep(0.01)
    sys.exit(f"rank {rank}: barrier {tag} timed out")
def block(i):
    return bytes((i * 37 + k * 7) % 251 for k in range(256)) * (B // 256)
path = os.path.join(d, "shared.bin")
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
fd2 = os.open(path, os.O_WRONLY) if rank == 0 else -1
barrier("open")
os.pwrite(fd, block(rank), rank * B)
if fd2 >= 0:
    os.pwrite(fd2, block(n), n * B)
barrier("written")
os.close(fd)
if fd2 >= 0:
    os.close(fd2)
PY

run_writers() {
  local dir=$1
  shift
  local pids=() r rc=0
  for ((r = 0; r < N; r++)); do
    "$@" /usr/bin/python3 "$T/writer.py" "$dir" "$r" "$N" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

run_writers "$DIRECT" env || fail "direct run failed"
run_writers "$CAP" with_lib || fail "run under the library failed"
[[ ! -f "$CAP/shared.bin" ]] || fail "shared.bin was not captured (a real file exists)"
with_lib cmp "$DIRECT/shared.bin" "$CAP/shared.bin" ||
  fail "shared.bin through the library differs from the direct run"
drain
restore_store "$CAP/.ckptfwd" "$OUT"
r=$(restored_file "$OUT" "$CAP/shared.bin")
[[ -n "$r" ]] || fail "restore did not produce shared.bin"
assert_same_bytes "$DIRECT/shared.bin" "$r" "restored shared.bin"
captured=$(timeout 10 "$CLI" stats --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["files_captured"])' 2>/dev/null || echo "?")
echo "forwarder files_captured: $captured"
[[ "$captured" == "?" || "$captured" == 1 ]] || fail "files_captured is $captured, expected 1 (one shared version)"
ok "$N concurrent writers (+1 second open) of one captured file: the union, $(stat -c %s "$DIRECT/shared.bin") bytes, identical through the library and in the restore"
