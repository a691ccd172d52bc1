#!/usr/bin/env bash
# A store written by the version before XXH3 content hashes (container format versions 3
# and 4, tests/data/store_v4: two jobs that wrote /tmp/ckptfwd-legacy-v4/ck/a.txt =
# `seq 1 60000` twice, the second time stored as references to the first, and b.txt =
# `seq 1 1000`, then `seq 5 2000`) is read by this version: `ckptfwd verify` is clean,
# `ckptfwd restore` and a job reading through the library give the bytes back, and a job
# of this version that rewrites a.txt into that store commits a container of the current
# format (6, XXH3) that refers to none of the old chunks, beside which the old b.txt still
# restores.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
DATA=$CKF_REPO/tests/data/store_v4
STORE=$T/store
cp -r "$DATA" "$STORE"
version_of() { od -An -tu4 -j8 -N4 "$1" | tr -d ' '; }
for c in "$STORE"/*.ckc; do
  v=$(version_of "$c")
  [[ $v == 3 || $v == 4 ]] || fail "test data $c is version $v, expected 3 or 4"
done

timeout 60 "$CLI" verify "$STORE" >"$T/verify.txt" 2>&1 || fail "verify of the old store failed: $(cat "$T/verify.txt")"
timeout 60 "$CLI" restore "$STORE" --to "$T/r1" >/dev/null 2>"$T/restore.err" ||
  fail "restore of the old store failed: $(cat "$T/restore.err")"
seq 1 60000 >"$T/a.want"
seq 5 2000 >"$T/b.want"
assert_same_bytes "$T/a.want" "$T/r1/a.txt" "a.txt restored from version 3 and 4 containers"
assert_same_bytes "$T/b.want" "$T/r1/b.txt" "b.txt restored from a version 4 container"
ok "an old store verifies and restores byte for byte"

# Through the library: the paths the old jobs wrote (absolute, as the MANIFEST names them).
CAP=/tmp/ckptfwd-legacy-v4/ck
[[ -e /tmp/ckptfwd-legacy-v4 ]] && fail "/tmp/ckptfwd-legacy-v4 exists: another run of this test?"
mkdir -p "$CAP"
# ckf_cleanup takes the test's status from $?: kept through the removal.
legacy_cleanup() {
  local rc=$?
  rm -rf /tmp/ckptfwd-legacy-v4
  (exit $rc)
  ckf_cleanup
}
trap legacy_cleanup EXIT
CAPTURE="$CAP/*"
export CKPTFWD_STORE=$STORE
with_lib cat "$CAP/a.txt" >"$T/a.read" || fail "reading a.txt through the library failed"
assert_same_bytes "$T/a.want" "$T/a.read" "a.txt read through the library"
ok "a job reads the old store through the library"

# A new version of a.txt goes into a container of the current format, without references
# to the old chunks (their XXH64 hashes cannot be compared with XXH3 ones).
with_lib sh -c "seq 1 60001 > $CAP/a.txt" || fail "rewriting a.txt through the library failed"
drain
new=$(ls -t "$STORE"/*.ckc | head -n 1)
[[ $(version_of "$new") == 6 ]] || fail "the new container $new is version $(version_of "$new")"
"$CLI" ls "$STORE" --all >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --all failed: $(tail -3 "$T/ls.txt")"
grep -q "$(basename "$new"): .* references" "$T/ls.txt" &&
  fail "the new container refers to old chunks: $(grep ckc "$T/ls.txt")"
timeout 60 "$CLI" verify "$STORE" >"$T/verify2.txt" 2>&1 || fail "verify of the mixed store failed: $(cat "$T/verify2.txt")"
timeout 60 "$CLI" restore "$STORE" --to "$T/r2" >/dev/null 2>"$T/restore2.err" ||
  fail "restore of the mixed store failed: $(cat "$T/restore2.err")"
seq 1 60001 >"$T/a2.want"
assert_same_bytes "$T/a2.want" "$T/r2/a.txt" "the new a.txt (version 6)"
assert_same_bytes "$T/b.want" "$T/r2/b.txt" "the old b.txt (version 4) beside it"
ok "a new version goes into a version 6 container beside the old ones; both restore"
