#!/usr/bin/env bash
# The forwarder's commit pipeline on a multi-batch job of tens of MiB: the batch budget
# (CKPTFWD_BATCH_BYTES) cuts the files into several batches, each encoded on the worker
# pool in many 1 MiB chunks while the writer appends the earlier ones (the bounded window),
# with hashing on the workers and the staged pages given back as they are consumed
# (CKPTFWD_TEST_RESIDENT_BUDGET: as for a batch larger than memory should hold). Every
# file restores byte-identical to the direct run, reads back identical through the library,
# and the stats carry the pipeline's counters (time_hash_s, peak_rss_bytes).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"
export CKPTFWD_BATCH_BYTES=16M CKPTFWD_CHUNK=1M CKPTFWD_WRITERS=3
# Batches over 1 MiB take the bounded-memory path (pread hashing, pages given back) that
# the forwarder uses for batches over 128 MiB.
export CKPTFWD_TEST_RESIDENT_BUDGET=1048576

sizes=(9M 7M 13M 5M 11M 3M)
for d in "$DIRECT" "$CAP"; do
  run=(); [[ $d == "$CAP" ]] && run=(with_lib)
  for i in "${!sizes[@]}"; do
    "${run[@]}" "$WRITER" big "$d/part_$i.bin" "${sizes[$i]}" --rank "$i" 2>"$T/w.err" ||
      fail "writing $d/part_$i.bin failed: $(cat "$T/w.err")"
  done
done
ok "${#sizes[@]} files, 48 MiB, written directly and through the library"

drain
n=$(count_containers "$CAP/.ckptfwd")
[[ $n -ge 3 ]] || fail "expected several batches (>= 3 containers for 48 MiB at 16 MiB a batch), got $n"
ok "committed as $n containers"

restore_store "$CAP/.ckptfwd" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "every file restores byte-identical"

for i in "${!sizes[@]}"; do
  with_lib cat "$CAP/part_$i.bin" >"$T/back.bin" || fail "reading part_$i.bin through the library failed"
  assert_same_bytes "$DIRECT/part_$i.bin" "$T/back.bin" "part_$i.bin through the library"
done
ok "every file reads back identical through the library"

wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit after going idle"
for key in time_hash_s peak_rss_bytes time_compress_s time_write_s time_commit_s; do
  grep -q "\"$key\":" "$CKPTFWD_STATS_FILE" || fail "the forwarder's stats lack $key: $(cat "$CKPTFWD_STATS_FILE")"
done
rss=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder peak_rss_bytes)
[[ $rss -gt 0 ]] || fail "peak_rss_bytes is 0"
ok "stats carry time_hash_s and peak_rss_bytes ($((rss >> 20)) MiB)"
