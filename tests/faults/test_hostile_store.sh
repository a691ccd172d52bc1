#!/usr/bin/env bash
# Another user prepares the victim's store (docs/what-survives-what.md). The attacker is uid 65534
# (setpriv); the victim is this test (root in CI).
#   1. In a shared (1777) checkpoint directory the attacker pre-creates the store the
#      victim's CKPTFWD_STORE names, with a forged MANIFEST and container. `ckptfwd verify`
#      must fail ("store owned by uid 65534, not you"); the library must not read the
#      forged bytes back; the forwarder must refuse to commit into it (error naming it):
#      the application's file stays staged (the store-failure path) and reads back as the
#      application wrote it, and the attacker's MANIFEST is left as it was.
#   2. The victim's own store holds a MANIFEST that is a symbolic link: the forwarder
#      refuses it (error naming it) and the link's target is untouched.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
# The exit wait asks a refusing store again for CKPTFWD_EXIT_RETRY_S (60 s by default).
export CKPTFWD_EXIT_RETRY_S=2
source "$(dirname "$0")/lib_faults.sh"
need_attacker
ckf_std_dirs
chmod 711 "$T"
SHARED=$T/shared
mkdir -m 1777 "$SHARED"
"$WRITER" big "$DIRECT/a.bin" 300K

# The forgery: a genuine store of another forwarder (node "forge"), then handed over to the
# attacker, who places it where the victim's store will be.
CKPTFWD_NODE_ID=forge CKPTFWD_STORE=$T/forge with_lib sh -c "echo FORGED-BYTES >'$CAP/b.bin'"
CKPTFWD_NODE_ID=forge CKPTFWD_STORE=$T/forge drain
"${ATTACKER[@]}" mkdir -m 777 "$SHARED/store"
cp -r "$T/forge"/* "$SHARED/store/"
chown -R 65534:65534 "$SHARED/store"
[[ -s "$SHARED/store/MANIFEST" ]] || fail "the forged store has no MANIFEST"
manifest_before=$(sha "$SHARED/store/MANIFEST")

# --- 1. the attacker's store ------------------------------------------------------------
export CKPTFWD_NODE_ID=victim CKPTFWD_STORE=$SHARED/store
set +e
"$CLI" verify "$SHARED/store" >"$T/verify.out" 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "verify of another user's store exited $rc: $(cat "$T/verify.out")"
grep -q "store owned by uid 65534, not you" "$T/verify.out" || fail "verify does not say whose store it is: $(cat "$T/verify.out")"
ok "verify fails on a store owned by uid 65534"

got=$(with_lib cat "$CAP/b.bin" 2>/dev/null || true)
[[ "$got" != *FORGED* ]] || fail "the library read the forged bytes back from the attacker's store"
ok "the forged file is not served"

timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$WRITER" big "$CAP/a.bin" 300K >"$T/victim.out" 2>&1 ||
  echo "note: the application exited $? (its files are not committed)"
grep -q "store directory $SHARED/store belongs to uid 65534" "$CKPTFWD_LOG" ||
  fail "the log does not name the refused store directory"
[[ $(sha "$SHARED/store/MANIFEST") == "$manifest_before" ]] || fail "the victim committed into the attacker's MANIFEST"
[[ $(find "$CKPTFWD_STAGE_DIR" -name 'v*.data' | wc -l) -ge 1 ]] || fail "the refused version is not kept in staging"
with_lib cmp "$CAP/a.bin" "$DIRECT/a.bin" 2>"$T/cmp.err" || fail "the staged file does not read back as written: $(cat "$T/cmp.err")"
ok "the forwarder refused the attacker's store; the file stays staged and reads back"

# --- 2. a MANIFEST that is a symbolic link --------------------------------------------------
export CKPTFWD_NODE_ID=victim2 CKPTFWD_STORE=$T/own
mkdir -m 700 "$T/own"
echo "precious" >"$T/target"
ln -s "$T/target" "$T/own/MANIFEST"
target_before=$(sha "$T/target")
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$WRITER" big "$CAP/c.bin" 300K >"$T/victim2.out" 2>&1 ||
  echo "note: the application exited $? (its files are not committed)"
[[ $(sha "$T/target") == "$target_before" ]] || fail "the symlinked MANIFEST's target $T/target was written"
grep -q "$T/own/MANIFEST is a symbolic link" "$CKPTFWD_LOG" || fail "the log does not name the symlinked MANIFEST"
ok "a symlinked MANIFEST is refused, its target untouched"
