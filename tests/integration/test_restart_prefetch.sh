#!/usr/bin/env bash
# A restart of many small files reads every byte exactly through the library while the
# forwarder stages the views of a container's files ahead of their opens
# (src/forwarder/restore/view_prefetch.h):
#   - 2 x 600 files of 4 KiB committed in two batches (two or more containers), plus a few
#     large files, read back by a new job (a restart) in one process: every byte equal to
#     a run without the library, and views were prefetched;
#   - a file overwritten in a later container reads as its newest version, never as the
#     view of the older one that the prefetch of its first container could have staged;
#   - a corrupt container: its files fail with an error naming each of them (never wrong
#     bytes), while every file of the other containers is still served.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
BENCH=$BUILD/bin/bench_smallfiles
[[ -x $BENCH ]] || fail "$BENCH is missing: build first"

# both 'command using $D': without the library on $DIRECT, then under it on $CAP.
both() {
  D=$DIRECT bash -c "$1" || fail "without the library: '$1' failed"
  with_lib env D="$CAP" bash -c "$1" 2>"$T/both.err" || fail "under the library: '$1' failed: $(tail -5 "$T/both.err")"
}

export BENCH WRITER
both '"$BENCH" write --dir "$D" --files 600 --size 4096 >/dev/null &&
  for i in 0 1 2; do "$WRITER" big "$D/big$i.bin" 6M --rank $i; done'
drain
both '"$BENCH" write --dir "$D" --first 600 --files 600 --size 4096 >/dev/null'
drain
both 'printf "the newest bytes of f000005, longer than before: %0200d" 5 >"$D/f000005"'
drain
before=$(find "$STORE" -maxdepth 1 -name '*.ckc' -printf '%f\n' | sort)
both '"$BENCH" write --dir "$D" --first 5000 --files 40 --size 4096 >/dev/null'
drain
victim=$(comm -13 <(echo "$before") <(find "$STORE" -maxdepth 1 -name '*.ckc' -printf '%f\n' | sort))
[[ $(echo "$victim" | wc -l) -eq 1 && -n $victim ]] || fail "expected one container for f005000..f005039, got: $victim"
[[ $(count_containers "$STORE") -ge 4 ]] || fail "expected at least 4 containers: $(ls "$STORE")"
ok "$(count_containers "$STORE") containers committed; f005000..f005039 are in $victim"

wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the writers' forwarder did not exit when idle"
# Flip a byte in the middle of the victim's chunk area (layout: src/store/container/container.h).
/usr/bin/python3 - "$STORE/$victim" <<'PY' || fail "could not corrupt $victim"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    data = f.read()
    index_offset = struct.unpack_from("<Q", data, len(data) - 32)[0]
    off = 16 + (index_offset - 16) // 2
    f.seek(off)
    f.write(bytes([data[off] ^ 0xFF]))
PY

# The restart: a new job, nothing staged; one process reads every good file in turn.
export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-restart
(cd "$DIRECT" && ls | grep -v '^f0050') >"$T/names"
[[ $(wc -l <"$T/names") -eq 1203 ]] || fail "expected 1203 good files, listed $(wc -l <"$T/names")"
(cd "$DIRECT" && xargs sha256sum <"$T/names") >"$T/want"
sed "s|^|$CAP/|" "$T/names" | with_lib xargs sha256sum >"$T/got.raw" 2>"$T/got.err" ||
  fail "reading the restart through the library failed: $(tail -5 "$T/got.err")"
sed "s|  $CAP/|  |" "$T/got.raw" >"$T/got"
if ! cmp -s "$T/want" "$T/got"; then
  fail "restart reads differ from the direct run: $(diff "$T/want" "$T/got" | head -5)"
fi
grep -q "f000005$" "$T/got" && [[ $(grep "f000005$" "$T/got") == $(grep "f000005$" "$T/want") ]] ||
  fail "f000005 does not read as its newest version"
ok "1203 files of the restart read byte-exact through the library (f000005: its newest version)"

# The corrupt container: an error naming each file that cannot be given back, or the
# true bytes; never wrong ones. The files of the other containers are still served.
failed=0
for i in $(seq 5000 5039); do
  n=$(printf 'f%06d' "$i")
  if with_lib cat "$CAP/$n" >"$T/one" 2>"$T/one.err"; then
    cmp -s "$T/one" "$DIRECT/$n" || fail "$n of the corrupt container read as wrong bytes without an error"
  else
    failed=$((failed + 1))
    grep -q "cannot restore $CAP/$n from" "$CKPTFWD_LOG" || fail "no error names $CAP/$n: $(tail -3 "$CKPTFWD_LOG")"
  fi
done
[[ $failed -gt 0 ]] || fail "no file of the corrupt container $victim failed to read"
for n in f000000 f000777 big2.bin f000005; do
  with_lib cat "$CAP/$n" | cmp -s - "$DIRECT/$n" || fail "$n no longer reads right after the corrupt container's errors"
done
ok "corrupt container: $failed of its 40 files fail with an error naming each; the others read fine"

drain
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the restart's forwarder did not exit when idle"
pre=$(stats_sum "$CKPTFWD_STATS_FILE" forwarder views_prefetched) || fail "stats file is not JSON lines: $pre"
[[ $pre -gt 0 ]] || fail "no read view was prefetched during the restart"
ok "$pre read views were staged ahead of their opens"
