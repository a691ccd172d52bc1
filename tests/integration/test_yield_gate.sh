#!/usr/bin/env bash
# The application's writes go first (forwarder/util/yield_gate.h): a process under the
# library stores the time of its captured writes in the session's activity word
# (wire/activity.h), and a forwarder busy with files closed before holds its bulk
# compression back while another process writes (the stats' time_yield_s), not with
# CKPTFWD_YIELD_MS=0; everything is committed and restores exactly either way.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
ckf_stage_on_tmpfs
PY=/usr/bin/python3
export CKPTFWD_IDLE_EXIT=60 CKPTFWD_BATCH_WINDOW_MS=0 CKPTFWD_WAVE_WINDOW_MS=0

# 1. The word: a captured write stores the time it ended (CLOCK_MONOTONIC, Python's
# time.monotonic_ns()), read through the session's file.
with_lib "$PY" - "$CAP/first.dat" "$CKPTFWD_STAGE_DIR" >"$T/word.out" 2>&1 <<'PYEOF' || fail "the word: $(cat "$T/word.out")"
import glob, os, struct, sys, time
before = time.monotonic_ns()
with open(sys.argv[1], "wb") as f:
    f.write(b"x" * 100000)
after = time.monotonic_ns()
files = glob.glob(os.path.join(sys.argv[2], "ckptfwd-*", "activity"))
if len(files) != 1:
    sys.exit(f"one activity file expected in the session, found {files}")
raw = open(files[0], "rb").read()
magic, word = struct.unpack_from("<Q", raw, 0)[0], struct.unpack_from("<Q", raw, 64)[0]
if len(raw) != 4096 or magic != 0x3179746976697463:
    sys.exit(f"{files[0]}: {len(raw)} bytes, magic {magic:#x}")
if not before <= word <= after:
    sys.exit(f"the word {word} is not the time of the write ({before}..{after})")
print(f"word {word}, the write {before}..{after}")
PYEOF
ok "a captured write stores its time in the session's activity word ($(cat "$T/word.out"))"

# 2. A busy forwarder and a writing process: 4 files of 16 MiB of noisy float64 closed by
# one process (its exit does not wait for them), then another writes a file in 64 KiB
# pieces for 1.5 s. Each writes the same bytes into $DIRECT too (not captured): the oracle.
busy_then_write() {  # TAG
  mkdir -p "$CAP/$1" "$DIRECT/$1"
  with_lib env CKPTFWD_EXIT_WAIT=0 "$PY" - "$CAP/$1" "$DIRECT/$1" <<'PYEOF' || return 1
import os, random, struct, sys
rnd = random.Random(1)
smooth = struct.pack("<65536d", *[300 + 50 * rnd.random() for _ in range(1 << 16)]) * 32
for i in range(4):
    b = bytearray(smooth)  # 16 MiB of float64 with their 3 low bytes random: noisy
    n = len(b) // 8
    for k in range(3):
        b[k::8] = os.urandom(n)
    for d in sys.argv[1:]:
        with open(f"{d}/busy{i}.raw", "wb") as f:
            for j in range(0, len(b), 1 << 20):
                f.write(b[j:j + (1 << 20)])
PYEOF
  with_lib "$PY" - "$CAP/$1" "$DIRECT/$1" <<'PYEOF' || return 1
import sys, time
end = time.monotonic() + 1.5
fs = [open(f"{d}/app.dat", "wb") for d in sys.argv[1:]]
i = 0
while time.monotonic() < end:
    for f in fs:
        f.write(bytes([i & 255]) * 65536)
    i += 1
    time.sleep(0.002)
for f in fs:
    f.close()
PYEOF
}
yield_time() { timeout 30 "$CLI" stats --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["time_yield_s"])'; }

busy_then_write held || fail "the busy run failed"
held=$(yield_time) || fail "no stats from the forwarder"
drain
"$PY" -c "import sys; sys.exit(0 if $held > 0.05 else 1)" ||
  fail "the forwarder did not hold its compression back while the application wrote (time_yield_s $held)"
ok "compression held back $held s (summed over the workers) while another process wrote"

export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-off CKPTFWD_YIELD_MS=0  # a new job, a new forwarder
busy_then_write off || fail "the run with CKPTFWD_YIELD_MS=0 failed"
off=$(yield_time) || fail "no stats from the forwarder"
drain
"$PY" -c "import sys; sys.exit(0 if $off == 0 else 1)" || fail "CKPTFWD_YIELD_MS=0 still held compression back ($off s)"
ok "CKPTFWD_YIELD_MS=0: nothing held back"

# 3. Every byte, from the store.
restore_store "$STORE" "$OUT"
n=0
for f in "$DIRECT"/held/* "$DIRECT"/off/*; do
  rel=${f#"$DIRECT"/}
  got=$OUT/$rel  # (restore cuts the paths' common directory)
  [[ -e $got ]] || got=$(restored_file "$OUT" "$CAP/$rel")
  [[ -n $got ]] || fail "$CAP/$rel not restored"
  cmp -s "$f" "$got" || fail "$CAP/$rel restored wrong"
  n=$((n + 1))
done
[[ $n -eq 10 ]] || fail "$n files compared, 10 expected"
ok "all $n files restored as written"
