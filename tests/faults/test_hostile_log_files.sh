#!/usr/bin/env bash
# CKPTFWD_LOG and CKPTFWD_STATS_FILE in a directory another user can write (docs/semantics.md, "Other
# users on the node"). The attacker (uid 65534) plants, in a shared 1777 directory, the log
# as a symbolic link to a file of the victim's and the stats file as a 0666 file of theirs.
# The victim's job (this test, root) must neither append through the link (the victim's
# file stays as it was) nor hand its stats lines (paths, sizes) to the attacker's file; the
# job's own checkpoint is still committed and restores exactly.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
need_attacker
ckf_std_dirs
chmod 711 "$T"
SHARED=$T/tmp
mkdir -m 1777 "$SHARED"
echo "precious" >"$T/victim_file"
precious=$(sha "$T/victim_file")
"${ATTACKER[@]}" ln -s "$T/victim_file" "$SHARED/ckptfwd.log"
"${ATTACKER[@]}" sh -c "umask 0; : >'$SHARED/stats.jsonl'"

export CKPTFWD_LOG=$SHARED/ckptfwd.log CKPTFWD_STATS_FILE=$SHARED/stats.jsonl CKPTFWD_LOG_LEVEL=info
"$WRITER" big "$DIRECT/a.bin" 300K
timeout 120 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$WRITER" big "$CAP/a.bin" 300K ||
  fail "the application exited $?"
drain
wait_for '[[ -z "$(session_forwarders)" ]]' 30 || fail "the forwarder did not exit after going idle"
[[ $(sha "$T/victim_file") == "$precious" ]] ||
  fail "log lines were appended through the planted symlink $SHARED/ckptfwd.log: $(tail -2 "$T/victim_file")"
[[ -L "$SHARED/ckptfwd.log" ]] || fail "the planted symlink was replaced"
[[ ! -s "$SHARED/stats.jsonl" ]] ||
  fail "the stats went into the attacker's $SHARED/stats.jsonl: $(head -c 200 "$SHARED/stats.jsonl")"
ok "nothing appended through the planted log symlink or into the attacker's stats file"
restore_store "$STORE" "$OUT"
assert_same_bytes "$DIRECT/a.bin" "$(restored_file "$OUT" "$CAP/a.bin")" "restored a.bin"
ok "the job's checkpoint is committed and restores exactly"
