#!/usr/bin/env bash
# Where the forwarder daemon runs (forwarder/daemon/daemonize.h): in the session of the
# process that started it, in a process group of its own, SIGHUP ignored. With autogroup
# scheduling a new session would be a scheduling group the kernel weighs as much as the
# application's, whatever the nice value of the forwarder's bulk threads; in the caller's
# session those threads yield to the application. Shown for `ckptfwd-forwarder --daemon`
# from a job script. The forwarder an MPI rank's library starts takes a session of its own
# instead: mpiexec gives every rank a session of its own, and in one rank's it shared that
# rank's scheduling group. A kill of the starter's process group and a SIGHUP leave it
# serving, and every byte is restored.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs

# stat_field PID N: field N of /proc/PID/stat (after the command name, which may hold spaces).
stat_field() {
  local s
  s=$(cat "/proc/$1/stat") || return 1
  s=${s##*) }
  echo "$s" | cut -d' ' -f$(($2 - 2))
}
one_forwarder() {
  local pids
  pids=$(session_forwarders)
  [[ $(echo "$pids" | wc -w) == 1 ]] || fail "one forwarder expected for job $CKPTFWD_JOB_ID, found: '$pids'"
  echo "$pids"
}
autogroup_of() { cut -d' ' -f1 "/proc/$1/autogroup" 2>/dev/null || echo none; }

# 1. From a job script in a session of its own (setsid): the daemon shares its session
# and autogroup, not its process group; the script's process group is killed afterwards.
setsid bash -c 'echo "$$ $(cut -d" " -f1 /proc/$$/autogroup 2>/dev/null || echo none)" >"$1/script"
  CKPTFWD_CAPTURE="$2" CKPTFWD_IDLE_EXIT=60 "$3" --daemon || exit 1
  sleep 0.2; kill -TERM -- -$$' _ "$T" "$CAPTURE" "$FWD" &
wait $! 2>/dev/null || true
read -r script_pid script_group <"$T/script"
fwd=$(one_forwarder)
[[ $(stat_field "$fwd" 6) == "$script_pid" ]] ||
  fail "the daemon is in session $(stat_field "$fwd" 6), not the job script's ($script_pid)"
[[ $(stat_field "$fwd" 5) != "$script_pid" ]] || fail "the daemon is in the job script's process group"
[[ $(autogroup_of "$fwd") == "$script_group" ]] ||
  fail "the daemon's scheduling group is $(autogroup_of "$fwd"), the job script's $script_group"
kill -HUP "$fwd"
sleep 0.2
kill -0 "$fwd" 2>/dev/null || fail "a SIGHUP stopped the forwarder"
mkdir -p "$CAP/script" "$DIRECT/script"
with_lib "$WRITER" write "$CAP/script" >/dev/null || fail "a write through the daemon"
"$WRITER" write "$DIRECT/script" >/dev/null
[[ $(one_forwarder) == "$fwd" ]] || fail "the write did not go to the daemon"
drain
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT/script" "$CAP/script" "$OUT"
ok "ckptfwd-forwarder --daemon: in the job script's session ($script_pid) and autogroup ($script_group), its own process group; a kill of the script's group and a SIGHUP leave it serving; restored exactly"
kill -TERM "$fwd"
wait_for '[[ -z "$(session_forwarders)" ]]' 5 || fail "the daemon did not stop on SIGTERM"

# 2. Started by an MPI rank's library (early start): in a session of its own, none of the
# ranks' (each rank has its own) nor this script's.
command -v mpiexec.mpich >/dev/null || skip "mpiexec.mpich not found"
export CKPTFWD_JOB_ID=$CKPTFWD_JOB_ID-mpi
CAP=$T/ckpt2 DIRECT=$T/direct2 OUT=$T/restored2
STORE=$CAP/.ckptfwd CAPTURE="$CAP/*"
mkdir -p "$CAP" "$DIRECT" "$OUT" "$T/ranks"
# (The library in the ranks only: under it, mpiexec would start the forwarder itself.)
mpiexec.mpich -n 3 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" sh -c 'cut -d" " -f6 /proc/$$/stat >"$1/$PMI_RANK"
  seq 1 $((200000 + PMI_RANK)) >"$2/rank$PMI_RANK.txt"' _ "$T/ranks" "$CAP" ||
  fail "the MPI job under the library"
for r in 0 1 2; do seq 1 $((200000 + r)) >"$DIRECT/rank$r.txt"; done
fwd=$(one_forwarder)
fwd_sid=$(stat_field "$fwd" 6)
sids=$(cat "$T"/ranks/*)
! grep -qx "$fwd_sid" <<<"$sids" || fail "the forwarder is in a rank's session ($fwd_sid of $(echo $sids))"
[[ $fwd_sid != "$(stat_field $$ 6)" ]] || fail "the forwarder is in the test script's session ($fwd_sid)"
ag=$(autogroup_of "$fwd")
[[ $ag == none || $ag != "$(autogroup_of $$)" ]] || fail "the forwarder shares the test script's scheduling group"
drain
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "started by a rank's library: in a session of its own ($fwd_sid; the ranks': $(echo $sids)); restored exactly"
