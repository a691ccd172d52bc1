#!/usr/bin/env bash
# One flipped byte in a container's chunk area (docs/what-survives-what.md, "corrupt container
# byte"): `ckptfwd verify` exits 1 naming the container and an offset; restoring the file
# whose data it hit fails loudly (non-zero exit, the file named), never hands back wrong
# bytes; the files of another container still restore byte-identical. A read through the
# library must not return the corrupted bytes as if they were good either.
#
# The byte is located from the container trailer (src/store/container/container.h): the chunk area
# is [16, index_offset), index_offset being the u64 32 bytes before the end.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

ckf_std_dirs

# Two batches, two containers: the victim alone in the first.
"$WRITER" big "$DIRECT/victim.bin" 1M
with_lib "$WRITER" big "$CAP/victim.bin" 1M || fail "writing victim.bin under the library failed"
drain
mapfile -t first < <(find "$STORE" -maxdepth 1 -name '*.ckc' -printf '%f\n')
[[ ${#first[@]} -eq 1 ]] || fail "expected one container after the first batch, found ${#first[@]}: ${first[*]:-none}"
victim=${first[0]}
for s in survivor1 survivor2; do
  "$WRITER" big "$DIRECT/$s.bin" 300K --rank 3
  with_lib "$WRITER" big "$CAP/$s.bin" 300K --rank 3 || fail "writing $s.bin under the library failed"
done
drain
[[ $(count_containers "$STORE") -ge 2 ]] || fail "expected a second container after the second batch: $(ls "$STORE")"
timeout 60 "$CLI" verify "$STORE" >"$T/verify0.out" 2>&1 || fail "verify failed before any corruption: $(tail -5 "$T/verify0.out")"
ok "two containers, verify clean; victim.bin is in $victim"

# Wait for the forwarder to go idle and exit, so nothing can still serve cached bytes.
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder did not exit when idle"

off=$(/usr/bin/python3 - "$STORE/$victim" <<'PY'
import struct, sys
path = sys.argv[1]
with open(path, "r+b") as f:
    data = f.read()
    if data[:8] != b"CKFWDC01" or data[-8:] != b"CKFWDEND":
        sys.exit(f"{path}: not a container (magic/trailer missing)")
    index_offset = struct.unpack_from("<Q", data, len(data) - 32)[0]
    if not 16 < index_offset <= len(data) - 32:
        sys.exit(f"{path}: index_offset {index_offset} out of range")
    off = 16 + (index_offset - 16) // 2
    f.seek(off)
    f.write(bytes([data[off] ^ 0xFF]))
    print(off)
PY
) || fail "could not flip a byte in $victim: $off"
ok "flipped the byte at offset $off of $victim"

set +e
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "ckptfwd verify exited $rc on a corrupt container (want 1): $(tail -5 "$T/verify.out")"
grep -q "$victim" "$T/verify.out" || fail "verify output does not name $victim: $(tail -5 "$T/verify.out")"
grep -qi "offset" "$T/verify.out" || fail "verify output gives no offset: $(tail -5 "$T/verify.out")"
ok "verify exits 1: $(grep -m1 "$victim" "$T/verify.out")"

set +e
timeout 60 "$CLI" restore "$STORE" --to "$OUT" </dev/null >"$T/restore.out" 2>&1
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "ckptfwd restore exited 0 although victim.bin's data is corrupt"
grep -q "victim.bin" "$T/restore.out" || fail "restore's error does not name victim.bin: $(tail -5 "$T/restore.out")"
r=$(restored_file "$OUT" "$CAP/victim.bin")
if [[ -n "$r" && "$(sha "$r")" != "$(sha "$DIRECT/victim.bin")" ]]; then
  fail "restore left a victim.bin with wrong bytes at $r (must fail, not corrupt silently)"
fi
for s in survivor1 survivor2; do
  r=$(restored_file "$OUT" "$CAP/$s.bin")
  [[ -n "$r" ]] || fail "$s.bin was not restored although its container is intact"
  assert_same_bytes "$DIRECT/$s.bin" "$r" "restored $s.bin"
done
ok "restore fails loudly for victim.bin (exit $rc) and restores the other files identically"

# Through the library: either an error, or the true bytes; never the corrupted ones.
if with_lib sha256sum "$CAP/victim.bin" >"$T/lib.sha" 2>"$T/lib.err"; then
  [[ "$(cut -d' ' -f1 "$T/lib.sha")" == "$(sha "$DIRECT/victim.bin")" ]] ||
    fail "reading victim.bin through the library returned corrupted bytes without an error"
fi
with_lib cat "$CAP/survivor1.bin" | cmp - "$DIRECT/survivor1.bin" || fail "survivor1.bin through the library differs"
ok "the library does not serve the corrupted bytes; intact files read fine"
