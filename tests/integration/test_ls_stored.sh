#!/usr/bin/env bash
# `ckptfwd ls` stored bytes per file and the total line add up (docs/cli.md, "What the store
# saves"): two checkpoint steps of 4 ranks, each file a mesh that never changes (1 MiB,
# stored by step 2 as references to step 1's chunks) and a state that does (256 KiB),
# then two step-1 files deleted through the library. At each stage, from `ls --json`:
#  - the files' stored bytes add up to total.bytes_stored exactly;
#  - the containers' sizes and chunk bytes read from their own trailers (u64
#    index_offset: the chunks are the bytes between the 16-byte header and the index)
#    give disk_bytes, bytes_stored + unused_chunk_bytes and metadata_bytes;
#  - step 1 alone: everything stored is used (no unused chunk bytes);
#  - after step 2 the mesh chunks, stored once in step 1's container, are split between
#    the two steps' files (step 2's files cost more than their own container holds,
#    step 1's less than theirs);
#  - after the deletes the two deleted files' state chunks are unused and their ranks'
#    step-2 files carry the whole mesh.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
# Whole chunks per file, so each file's chunks are its own whatever the batch order.
export CKPTFWD_CHUNK=262144

check_ls() { # STAGE: ls --json into $T/ls-STAGE.json and the checks every stage shares
  "$CLI" ls "$STORE" --json >"$T/ls-$1.json" 2>"$T/ls.err" || fail "ckptfwd ls --json failed: $(cat "$T/ls.err")"
  "$CLI" ls "$STORE" >"$T/ls-$1.txt" 2>"$T/ls.err" || fail "ckptfwd ls failed: $(cat "$T/ls.err")"
  /usr/bin/python3 - "$T/ls-$1.json" "$STORE" "$1" <<'PY' || fail "stage $1: ls does not add up (above)"
import json, os, struct, sys
ls, store, stage = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
tot = ls["total"]
per_file = sum(f["stored_bytes"] for f in ls["files"])
assert per_file == tot["bytes_stored"], f"files sum to {per_file}, total says {tot['bytes_stored']}"
assert tot["files"] == len(ls["files"]) and tot["bytes_in"] == sum(f["size"] for f in ls["files"])
size = chunks = 0
names = sorted(n for n in os.listdir(store) if n.endswith(".ckc"))
for n in names:
    b = open(os.path.join(store, n), "rb").read()
    assert b[:8] == b"CKFWDC01" and b[-8:] == b"CKFWDEND", n
    index_offset, index_len = struct.unpack("<QQ", b[-32:-16])
    assert index_offset + index_len + 32 == len(b), n
    size += len(b)
    chunks += index_offset - 16
assert tot["containers"] == len(names), f"{tot['containers']} containers, the store has {len(names)}"
assert tot["disk_bytes"] == size, f"disk_bytes {tot['disk_bytes']}, the files are {size}"
assert tot["bytes_stored"] + tot["unused_chunk_bytes"] == chunks, (tot, chunks)
assert tot["metadata_bytes"] == size - chunks, (tot, size - chunks)
print(f"stage {stage}: {tot['files']} files, {tot['bytes_in']} in, {tot['bytes_stored']} stored, "
      f"{tot['unused_chunk_bytes']} unused, {tot['metadata_bytes']} metadata in {len(names)} containers")
PY
  grep -q "^total: $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["files"])' "$T/ls-$1.json") files, " "$T/ls-$1.txt" ||
    fail "stage $1: ls prints no total line: $(tail -2 "$T/ls-$1.txt")"
}

# chunk_bytes N: the chunk bytes of the N-th container the MANIFEST names (from its trailer).
chunk_bytes() {
  local c
  c=$(grep -o -E $'^(commit|create)\t[^\t]*' "$STORE/MANIFEST" | cut -f2 | sed -n "${1}p")
  /usr/bin/python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(); print(struct.unpack("<Q", b[-32:-24])[0] - 16)' "$STORE/$c"
}

for r in 0 1 2 3; do head -c 1048576 /dev/urandom >"$T/mesh.r$r"; done
for n in 1 2; do
  for r in 0 1 2 3; do
    cat "$T/mesh.r$r" <(head -c 262144 /dev/urandom) >"$DIRECT/step$n.rank$r.bin"
    PMI_RANK=$r CKPTFWD_EXIT_WAIT=0 with_lib cp "$DIRECT/step$n.rank$r.bin" "$CAP/" ||
      fail "step $n rank $r under the library failed"
  done
  drain
  check_ls "$n"
  if [[ $n -eq 1 ]]; then
    /usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; assert t["unused_chunk_bytes"]==0, t' "$T/ls-1.json" ||
      fail "step 1 alone: every chunk is used, but ls says otherwise"
  fi
done
A=$(chunk_bytes 1)
B=$(chunk_bytes 2)
/usr/bin/python3 - "$T/ls-2.json" "$A" "$B" <<'PY' || fail "the referenced mesh is not split between the steps (above)"
import json, sys
ls, a, b = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
step = lambda n: sum(f["stored_bytes"] for f in ls["files"] if f"/step{n}." in f["path"])
s1, s2 = step(1), step(2)
assert s1 + s2 == a + b, (s1, s2, a, b)
# Step 2's container holds its states and the references; its files also pay for half of
# the mesh stored in step 1's container (4 MiB of random bytes: at least 1.5 MiB of it).
assert s2 > b + 1.5 * 2**20, f"step 2 files cost {s2}, their container holds {b}: the references were not followed"
assert s1 < a - 1.5 * 2**20, f"step 1 files cost {s1} of their container's {a}: the mesh is not shared"
print(f"step 1 files {s1} of container {a}; step 2 files {s2} of container {b}")
PY
ok "per-file stored bytes and the total add up; referenced chunks count where stored, split between their users"

with_lib rm "$CAP/step1.rank0.bin" "$CAP/step1.rank1.bin" || fail "rm through the library failed"
check_ls 3
/usr/bin/python3 - "$T/ls-3.json" <<'PY' || fail "after the deletes (above)"
import json, sys
ls = json.load(open(sys.argv[1]))
by = {f["path"].rsplit("/", 1)[1]: f["stored_bytes"] for f in ls["files"]}
assert "step1.rank0.bin" not in by and len(by) == 6, sorted(by)
unused = ls["total"]["unused_chunk_bytes"]
assert unused >= 2 * 262144 * 0.9, f"the deleted files' states ({2 * 262144} random bytes) are not unused: {unused}"
# Rank 0's step-2 file now carries its whole mesh; rank 2's still shares it with step 1.
assert by["step2.rank0.bin"] > by["step2.rank2.bin"] + 0.4 * 2**20, by
print(f"unused {unused}; step2.rank0 {by['step2.rank0.bin']}, step2.rank2 {by['step2.rank2.bin']}")
PY
ok "deleted files' chunks are counted as unused; the remaining users carry the shared chunks"

# A store a forwarder made but never committed to (its group directory only): ls and
# restore say so and name the fix, instead of asking whether it is a ckptfwd store.
mkdir -p "$T/unused/.ckptfwd/.group-somejob"
if "$CLI" ls "$T/unused/.ckptfwd" >"$T/ls.out" 2>"$T/ls.err"; then fail "ls of an empty store succeeded"; fi
grep -q "nothing is committed in the store $T/unused/.ckptfwd yet" "$T/ls.err" ||
  fail "ls of an empty store says: $(cat "$T/ls.err")"
if "$CLI" restore "$T/unused/.ckptfwd" --to "$T/unused-out" >"$T/ls.out" 2>"$T/ls.err"; then
  fail "restore of an empty store succeeded"
fi
grep -q "CKPTFWD_CAPTURE" "$T/ls.err" || fail "restore of an empty store says: $(cat "$T/ls.err")"
ok "a store with nothing committed is named as such by ls and restore"

