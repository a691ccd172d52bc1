#!/usr/bin/env bash
# Where the store sits by default: at the literal directory of the capture glob, so an
# application that writes each checkpoint into a new directory feeds one store. And a
# store of the former default (.ckptfwd beside the files, made here with CKPTFWD_STORE
# as earlier versions made it by default) keeps serving the files committed in it.
#   - step_1/ and step_2/ written with CAPTURE=<ckpt>/step_*/r*.bin: one store <ckpt>/.ckptfwd,
#     none in the step directories; ckptfwd verify is clean, ls names all, restore is
#     byte-exact;
#   - under the library: the files read back, and listing a step directory shows them;
#   - step_0/ committed into step_0/.ckptfwd first: read back, listed, rewritten and read
#     again through the library with the new default in force.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

CK=$T/ckpt
DIRECT=$T/direct
mkdir -p "$CK/step_0" "$CK/step_1" "$CK/step_2" "$DIRECT"
CAPTURE="$CK/step_*/r*.bin"

make_bytes() { head -c "$2" /dev/urandom >"$1"; }
for s in 0 1 2; do
  for r in 0 1 2; do make_bytes "$DIRECT/s${s}_r$r.bin" $((3000 + 1000 * r + s)); done
done

# step_0 into a store of the former default (beside the files).
for r in 0 1 2; do
  with_lib env CKPTFWD_STORE="$CK/step_0/.ckptfwd" cp "$DIRECT/s0_r$r.bin" "$CK/step_0/r$r.bin" ||
    fail "cp into step_0 under the library failed"
done
timeout 120 "$CLI" drain >/dev/null || fail "drain after step_0 failed"
wait_for '[[ -z "$(session_forwarders)" ]]' 20 || fail "the forwarder of step_0 did not leave"
[[ -f "$CK/step_0/.ckptfwd/MANIFEST" ]] || fail "no old-style store in $CK/step_0"

for s in 1 2; do
  for r in 0 1 2; do
    with_lib cp "$DIRECT/s${s}_r$r.bin" "$CK/step_$s/r$r.bin" || fail "cp into step_$s failed"
  done
done
drain
STORE=$CK/.ckptfwd
[[ -f "$STORE/MANIFEST" ]] || fail "no store at the glob's directory $STORE: $(find "$CK" -name .ckptfwd)"
for s in 1 2; do
  [[ ! -e "$CK/step_$s/.ckptfwd" ]] || fail "a store was made in $CK/step_$s"
  for r in 0 1 2; do
    [[ ! -e "$CK/step_$s/r$r.bin" ]] || fail "$CK/step_$s/r$r.bin is on disk: not captured"
  done
done
ok "steps 1 and 2 went into the one store $STORE"

timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify failed: $(tail -5 "$T/verify.out")"
timeout 60 "$CLI" ls "$STORE" >"$T/ls.out" 2>&1 || fail "ckptfwd ls failed: $(tail -5 "$T/ls.out")"
for s in 1 2; do
  for r in 0 1 2; do
    grep -qF "$CK/step_$s/r$r.bin" "$T/ls.out" || fail "ckptfwd ls does not name step_$s/r$r.bin"
  done
done
OUT=$T/restored
restore_store "$STORE" "$OUT"
for s in 1 2; do
  for r in 0 1 2; do
    # restore keeps the paths below their common directory (the store's)
    got=$(restored_file "$OUT" "$CK/step_$s/r$r.bin")
    [[ -n "$got" ]] || got=$OUT/step_$s/r$r.bin
    assert_same_bytes "$DIRECT/s${s}_r$r.bin" "$got" "restored step_$s/r$r.bin"
  done
done
ok "verify clean, ls names every file, restore byte-exact"

for s in 0 1 2; do
  for r in 0 1 2; do
    with_lib cat "$CK/step_$s/r$r.bin" >"$T/read.bin" || fail "reading step_$s/r$r.bin under the library failed"
    assert_same_bytes "$DIRECT/s${s}_r$r.bin" "$T/read.bin" "read-back of step_$s/r$r.bin"
  done
  listing=$(with_lib ls "$CK/step_$s" | tr '\n' ' ')
  [[ "$listing" == "r0.bin r1.bin r2.bin " ]] || fail "ls step_$s under the library shows '$listing'"
done
ok "every step reads back and lists under the library (step_0 from its old-style store)"

# A rewrite of a file of the old store lands there and reads back.
make_bytes "$DIRECT/new.bin" 4321
with_lib cp "$DIRECT/new.bin" "$CK/step_0/r1.bin" || fail "rewriting step_0/r1.bin failed"
drain
with_lib cat "$CK/step_0/r1.bin" >"$T/read.bin" || fail "reading the rewritten step_0/r1.bin failed"
assert_same_bytes "$DIRECT/new.bin" "$T/read.bin" "rewritten step_0/r1.bin"
timeout 60 "$CLI" ls "$CK/step_0/.ckptfwd" | grep -qF "$CK/step_0/r1.bin" ||
  fail "the rewrite did not go to the old store of step_0"
ok "a file of the old store is rewritten into it"
