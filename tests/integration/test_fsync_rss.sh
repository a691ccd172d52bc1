#!/usr/bin/env bash
# The forwarder's memory stays bounded while it commits an fsync of a large file in place
# (a file over CKPTFWD_SNAPSHOT_READ_MAX, 128 MiB by default, is compressed from the staged
# file, its pages given back as they are read): a 384 MiB file fsync'd keeps the
# forwarder's peak RSS under 256 MiB (it counts the mapped pages of the staged file that
# are resident at once), the snapshot is committed in place, and it restores exactly.
# Then 4 MPI ranks each fsync a 96 MiB file (bench_ckpt_writer --fsync), usually one batch:
# each file is under that size, but the forwarder reads at most that many bytes of
# snapshots into memory in all (forwarder/batching/batch_budget.h), the rest in place; its peak
# RSS stays under 256 MiB too (reading all four into memory, as
# does, peaked at 430-470 MiB), and every rank reads its file back exactly.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs

# check_peak_rss STATS WHAT: the forwarder's peak RSS in its stats line of STATS is under
# 256 MiB while committing WHAT; RSS_SAID says it for the ok line. A sanitizer build's RSS
# (make asan: CKPTFWD_SANITIZE; make tsan: CKPTFWD_TSAN, the only one of the two in its
# cache) holds its shadow memory, and under ASan the quarantine of freed blocks: hundreds
# of MiB (1213 MiB under ThreadSanitizer for the 4 ranks). The bound speaks for the
# release build only.
check_peak_rss() {
  local rss
  rss=$(stats_sum "$1" forwarder peak_rss_bytes)
  [[ $rss -gt 0 ]] || fail "peak_rss_bytes is 0 in $1"
  RSS_SAID="$((rss >> 20)) MiB peak RSS"
  if grep -qE "^CKPTFWD_(SANITIZE|TSAN):BOOL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null; then
    RSS_SAID+=" (sanitizer build: not checked against the bound)"
  else
    [[ $rss -lt $((256 << 20)) ]] ||
      fail "forwarder peak RSS $((rss >> 20)) MiB committing $2 (want < 256 MiB)"
  fi
}
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
check_peak_rss "$T/stats.jsonl" "a 384 MiB fsync in place"
ok "384 MiB fsync'd and committed in place with the forwarder at $RSS_SAID; restores exactly"

# Four ranks fsyncing at once: a new job (its own forwarder and stats file).
need_cmd mpiexec.mpich
RANKS_APP=$BUILD/bin/bench_ckpt_writer
[[ -x "$RANKS_APP" ]] || fail "$RANKS_APP is missing: build first"
export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-ranks CKPTFWD_STATS_FILE=$T/stats-ranks.jsonl
mkdir -p "$CAP/ranks"
with_lib timeout 300 mpiexec.mpich -n 4 "$RANKS_APP" --mode write --dir "$CAP/ranks" --bytes 384M \
  --fsync >"$T/ranks-write.txt" || fail "4 ranks writing 96 MiB each with fsync failed"
drain
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "the forwarder of the ranks' job did not leave"
# The restart (a new job, its own forwarder): every byte checked by the ranks.
CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-read CKPTFWD_STATS_FILE=$T/stats-read.jsonl \
  with_lib timeout 300 mpiexec.mpich -n 4 "$RANKS_APP" --mode read --dir "$CAP/ranks" --bytes 384M \
  >"$T/ranks-read.txt" || fail "the 4 ranks' files did not read back exactly: $(cat "$T/ranks-read.txt")"
# Ranks that fsync far apart (a loaded machine) land in batches of one file each, which
# fit the budget: how many were read in place is reported, the bound is what is checked.
in_place=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder fsync_in_place)
check_peak_rss "$CKPTFWD_STATS_FILE" "4 ranks' 96 MiB fsyncs"
ok "4 ranks x 96 MiB fsync'd: $in_place of them read in place, forwarder at $RSS_SAID; read back exactly"
