#!/usr/bin/env bash
# Lossy only where opted in (docs/internals.md, "Lossy compression, opt-in"), on the user's path: a
# writer under the library with a schema `int64 n; float64 T[n]; float64 P[n]` and
# CKPTFWD_LOSSY='T_*=abs:0.5', where P holds the same bytes as a T (of the same file, and of
# another rank's file of the same checkpoint). After `ckptfwd restore` every P is the
# direct run's byte for byte (cmp), every T within 0.5 of it (and changed: it was stored
# lossy), and `ckptfwd verify` passes.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
ckf_std_dirs
need_cmd python3 cmp

cat >"$T/ckpt.schema" <<'EOF'
file "*/rank_*.bin" little_endian
  int64   n
  float64 T[n]
  float64 P[n]
EOF
export CKPTFWD_SCHEMA=$T/ckpt.schema CKPTFWD_LOSSY='T_*=abs:0.5'
export CKPTFWD_CODEC_MIN_MBPS=0 # the chains chosen must not depend on the machine's speed
N=262144

# The checkpoint of three ranks, written by one process into DIR: rank 0's P is its own T;
# rank 2's P is rank 1's T.
cat >"$T/write.py" <<'EOF'
import math, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
def field(seed):
    return struct.pack("<%dd" % n, *(math.sin(0.001 * i + seed) * 1000.0 + 0.37 * seed
                                     for i in range(n)))
a, b, c, e = field(1), field(2), field(3), field(4)
for rank, (t, p) in enumerate([(a, a), (b, c), (e, b)]):
    with open("%s/rank_%d.bin" % (d, rank), "wb") as f:
        f.write(struct.pack("<q", n) + t + p)
EOF
python3 "$T/write.py" "$DIRECT" "$N"
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" python3 "$T/write.py" "$CAP" "$N" ||
  fail "the writer under the library exited $?"
drain
restore_store "$STORE" "$OUT"
timeout 120 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify: $(tail -5 "$T/verify.out")"

P_OFF=$((8 + 8 * N))
for rank in 0 1 2; do
  got=$(restored_file "$OUT" "$CAP/rank_$rank.bin")
  [[ -n "$got" ]] || fail "rank_$rank.bin was not restored"
  cmp -i "$P_OFF:$P_OFF" -n $((8 * N)) "$DIRECT/rank_$rank.bin" "$got" >"$T/cmp.out" 2>&1 ||
    fail "P of rank_$rank.bin (not opted in) is not restored byte for byte: $(head -1 "$T/cmp.out")"
  cmp -n 8 "$DIRECT/rank_$rank.bin" "$got" >/dev/null || fail "n of rank_$rank.bin changed"
done
ok "every P restored byte for byte"

# T: within its bound everywhere, and changed somewhere (else the test shows nothing).
python3 - "$DIRECT" "$OUT" "$CAP" "$N" <<'EOF' || fail "T is not within its bound, or not lossy at all"
import os, struct, sys
direct, out, cap, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
changed = 0
for rank in range(3):
    name = "rank_%d.bin" % rank
    got = os.path.join(out, name) if os.path.exists(os.path.join(out, name)) else out + cap + "/" + name
    a = struct.unpack_from("<%dd" % n, open(os.path.join(direct, name), "rb").read(), 8)
    b = struct.unpack_from("<%dd" % n, open(got, "rb").read(), 8)
    worst = max(abs(x - y) for x, y in zip(a, b))
    if worst > 0.5:
        sys.exit("%s: T off by %g" % (name, worst))
    changed += sum(x != y for x, y in zip(a, b))
if changed == 0:
    sys.exit("no value of T changed: CKPTFWD_LOSSY had no effect")
print("T: %d values changed, all within 0.5" % changed)
EOF
ok "T lossy within its bound, verify clean"
