#!/usr/bin/env bash
# `ckptfwd restore --to DIR` into a directory another user can write, and a store directory
# another user replaced by a symbolic link (docs/semantics.md, "Other users on the node"). The attacker
# is uid 65534; the victim is this test (root) or uid 65533 (setpriv: no account needed).
# The attacker knows the restore's pid (the test plants for it, as one who plants every
# pid would) and plants the temporary name the restore used to write into,
# .a.bin.ckptfwd-restore.<pid>:
#   1. a non-root victim restoring into a shared (1777) directory: the planted file (the
#      attacker's, mode 0666) must never receive the victim's bytes;
#   2. root restoring there: the restored file must be root's, not the attacker's file that
#      the attacker could rewrite afterwards;
#   3. the planted name as a symbolic link to the attacker's file: root's restore neither
#      writes through it nor fails;
#   4. a destination file or symlink the attacker planted, and a directory of the
#      attacker's on the way: refused (named, exit 1), nothing written through them,
#      the other files restored;
#   5. the victim's default store $CAP/.ckptfwd planted as a symbolic link to a directory
#      of the victim's: the forwarder never creates its .pending-<job> file there (the
#      store is refused, with the error naming it and the fix).
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_attacker
ckf_std_dirs
chmod 711 "$T"
VICTIM=(setpriv --reuid=65533 --regid=65533 --clear-groups)

# The store: a.bin, b.bin and sub/c.bin written through the library by root.
mkdir -p "$DIRECT/sub" "$CAP/sub"
"$WRITER" big "$DIRECT/a.bin" 300K
"$WRITER" big "$DIRECT/b.bin" 200K
"$WRITER" big "$DIRECT/sub/c.bin" 100K
with_lib sh -c "cp '$DIRECT/a.bin' '$DIRECT/b.bin' '$CAP/' && cp '$DIRECT/sub/c.bin' '$CAP/sub/'"
drain
# The victim's copy of it (uid 65533 restores its own store).
cp -a "$STORE" "$T/vstore"
chown -R 65533:65533 "$T/vstore"
chmod 711 "$T/vstore"
ATT_TARGET=$T/attacker/target
mkdir -m 755 "$T/attacker"
printf 'ATTACKER\n' >"$ATT_TARGET"
chown -R 65534:65534 "$T/attacker"
target_before=$(sha "$ATT_TARGET")

# restore_planted KIND DIR AS STORE [ARGS...]: `ckptfwd restore STORE --to DIR ARGS` as AS
# (root or victim), after the attacker planted DIR/.a.bin.ckptfwd-restore.<its pid>: KIND
# file (an empty 0666 file of theirs) or symlink (to $ATT_TARGET). Sets PLANTED and RC
# (the restore's exit status).
restore_planted() {
  local kind=$1 dir=$2 as=$3 store=$4
  shift 4
  local as_cmd=()
  [[ $as == victim ]] && as_cmd=("${VICTIM[@]}")
  set +e
  PLANT_DIR=$dir PLANT_KIND=$kind PLANT_TARGET=$ATT_TARGET bash -c '
    name="$PLANT_DIR/.a.bin.ckptfwd-restore.$$"
    echo "$name" >"$PLANT_DIR.planted"
    if [ "$PLANT_KIND" = file ]; then
      setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "umask 0; : >\"$name\""
    else
      setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$PLANT_TARGET" "$name"
    fi
    [ -e "$name" ] || [ -L "$name" ] || exit 99
    exec "$@"' restore-runner "${as_cmd[@]}" "$CLI" restore "$store" --to "$dir" "$@" \
    >"$T/restore.out" 2>&1
  RC=$?
  set -e
  PLANTED=$(cat "$dir.planted")
  [[ $RC -ne 99 ]] || fail "the test could not plant $PLANTED"
}

# planted_size: bytes in the attacker's planted file now (0 when it is gone).
planted_size() { if [[ -f "$PLANTED" ]]; then stat -c %s "$PLANTED"; else echo 0; fi; }

# --- 1. a non-root victim's restore into a shared directory --------------------------------
SH1=$T/shared1
mkdir -m 1777 "$SH1"
restore_planted file "$SH1" victim "$T/vstore" "$CAP/a.bin"
leaked=$(planted_size)
[[ $leaked -eq 0 ]] || fail "the attacker's planted $PLANTED holds $leaked bytes of the victim's checkpoint (restore exit $RC: $(tail -2 "$T/restore.out"))"
[[ $RC -eq 0 ]] || fail "the victim's restore exited $RC: $(tail -3 "$T/restore.out")"
assert_same_bytes "$DIRECT/a.bin" "$SH1/a.bin" "a.bin restored by uid 65533"
[[ $(stat -c %u "$SH1/a.bin") -eq 65533 ]] || fail "$SH1/a.bin belongs to uid $(stat -c %u "$SH1/a.bin"), not the victim"
ok "a non-root restore never writes into the attacker's planted temporary name"

# --- 2. root's restore into a shared directory ---------------------------------------------
SH2=$T/shared2
mkdir -m 1777 "$SH2"
restore_planted file "$SH2" root "$STORE" "$CAP/a.bin"
[[ $RC -eq 0 ]] || fail "root's restore exited $RC: $(tail -3 "$T/restore.out")"
owner=$(stat -c %u "$SH2/a.bin")
[[ $owner -eq 0 ]] || fail "the restored $SH2/a.bin belongs to uid $owner (the attacker's planted file was renamed into place)"
if "${ATTACKER[@]}" sh -c "echo REWRITTEN >'$SH2/a.bin'" 2>/dev/null; then
  fail "the attacker rewrote root's restored $SH2/a.bin"
fi
assert_same_bytes "$DIRECT/a.bin" "$SH2/a.bin" "a.bin restored by root"
[[ $(planted_size) -eq 0 ]] || fail "root's restore wrote into the attacker's $PLANTED"
ok "root's restored file is root's; the attacker cannot rewrite it"

# --- 3. the planted temporary name as a symbolic link --------------------------------------
SH3=$T/shared3
mkdir -m 1777 "$SH3"
restore_planted symlink "$SH3" root "$STORE" "$CAP/a.bin"
[[ $(sha "$ATT_TARGET") == "$target_before" ]] || fail "root's restore wrote through the planted symlink into $ATT_TARGET"
[[ $RC -eq 0 ]] || fail "root's restore beside a planted symlink exited $RC: $(tail -3 "$T/restore.out")"
assert_same_bytes "$DIRECT/a.bin" "$SH3/a.bin" "a.bin restored beside a planted symlink"
ok "a planted symlink is neither followed nor in the way"

# --- 4. planted destinations and directories -----------------------------------------------
SH4=$T/shared4
mkdir -m 1777 "$SH4"
"${ATTACKER[@]}" sh -c "echo MINE >'$SH4/a.bin'; ln -s '$ATT_TARGET' '$SH4/b.bin'; mkdir -m 777 '$SH4/sub'"
set +e
"$CLI" restore "$STORE" --to "$SH4" >"$T/restore4.out" 2>&1
rc=$?
set -e
[[ $(sha "$ATT_TARGET") == "$target_before" ]] || fail "the restore wrote through the attacker's symlink $SH4/b.bin"
[[ $(cat "$SH4/a.bin") == MINE ]] || fail "the restore replaced the attacker's $SH4/a.bin (exit $rc)"
[[ -L "$SH4/b.bin" ]] || fail "the restore replaced the attacker's symlink $SH4/b.bin (exit $rc)"
[[ ! -e "$SH4/sub/c.bin" ]] || fail "the restore wrote into the attacker's directory $SH4/sub (exit $rc)"
[[ $rc -eq 1 ]] || fail "a restore refusing files exited $rc: $(cat "$T/restore4.out")"
grep -q "refusing to replace $SH4/a.bin: it belongs to uid 65534" "$T/restore4.out" ||
  fail "the refusal of a.bin does not name it and its owner: $(cat "$T/restore4.out")"
grep -q "refusing to write into directory $SH4/sub: it belongs to uid 65534" "$T/restore4.out" ||
  fail "the refusal of sub/ does not name it: $(cat "$T/restore4.out")"
grep -q "Fix:" "$T/restore4.out" || fail "the refusals give no fix: $(cat "$T/restore4.out")"
ok "another user's destinations and directories are refused, named, never written through"

# --- 5. a store directory planted as a symbolic link: no .pending-<job> through it ----------
CAP5=$T/ckpt5
mkdir -m 1777 "$CAP5"
mkdir -m 700 "$T/victim_private"
"${ATTACKER[@]}" ln -s "$T/victim_private" "$CAP5/.ckptfwd"
# The close-to-open journal is written only by a forwarder outside a group (with one, the
# path's owner answers for it): CKPTFWD_GROUP=0 here, and a fresh forwarder of a job of
# its own with its group below.
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAP5/*" CKPTFWD_EXIT_WAIT=0 CKPTFWD_GROUP=0 \
  CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-5" "$WRITER" big "$CAP5/d.bin" 100K >"$T/writer5.out" 2>&1 ||
  echo "note: the application exited $? (its files are not committed)"
wait_for "grep -q '$CAP5/.ckptfwd is a symbolic link owned by uid 65534' '$CKPTFWD_LOG'" 20 ||
  fail "the log does not name the planted store symlink $CAP5/.ckptfwd"
pending=$(find "$T/victim_private" -name '.pending-*' | head -1)
[[ -z "$pending" ]] || fail "the forwarder created $pending through the planted store symlink $CAP5/.ckptfwd"
[[ -z "$(ls -A "$T/victim_private")" ]] || fail "something was written through the planted symlink: $(ls -A "$T/victim_private")"
grep -q "cannot note $CAP5/d.bin as closed.*$CAP5/.ckptfwd is a symbolic link owned by uid 65534.*Fix:" "$CKPTFWD_LOG" ||
  fail "the refused .pending file is not logged with the store's path and the fix: $(grep pending "$CKPTFWD_LOG" | tail -3)"
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAP5/*" CKPTFWD_EXIT_WAIT=0 \
  CKPTFWD_JOB_ID="$CKPTFWD_JOB_ID-5g" "$WRITER" big "$CAP5/e.bin" 100K >"$T/writer5g.out" 2>&1 ||
  echo "note: the application exited $? (its files are not committed)"
wait_for "grep -q 'no forwarder group for job $CKPTFWD_JOB_ID-5g.*$CAP5/.ckptfwd is a symbolic link owned by uid 65534' '$CKPTFWD_LOG'" 20 ||
  fail "the group's start does not refuse the planted store symlink by name: $(grep -i group "$CKPTFWD_LOG" | tail -3)"
[[ -z "$(ls -A "$T/victim_private")" ]] || fail "the group wrote through the planted symlink: $(ls -A "$T/victim_private")"
ok "no .pending-<job> file nor group directory through another user's store symlink; the store is refused by name"
