#!/usr/bin/env bash
# A forwarder killed while idle leaves its session directory in node memory (staging on
# tmpfs, as by default): its socket, lock, the read view it restored for a reader (a whole
# copy of the file), and the data of a version it had just committed. The next forwarder of this user on the node, of another job,
# removes it; a killed forwarder's directory that still holds a staged version not yet
# committed keeps that version (only its read views go), and that job's next forwarder
# commits it. Before, nothing removed them: every killed job's read views stayed in
# /dev/shm until the node rebooted.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/lib_faults.sh"
ckf_std_dirs
ckf_stage_on_tmpfs
export CKPTFWD_IDLE_EXIT=60 CKPTFWD_BATCH_WINDOW_MS=3000
job0=$CKPTFWD_JOB_ID
sessions() { find "$CKPTFWD_STAGE_DIR" -mindepth 1 -maxdepth 1 -name "ckptfwd-*" | sort; }

"$FW" "$DIRECT/a.dat" 4M >/dev/null || fail "direct run failed"
"$FW" "$DIRECT/b.dat" 2M >/dev/null || fail "direct run failed"
"$FW" "$DIRECT/c.dat" 1M >/dev/null || fail "direct run failed"
# Job 1: writes a.dat (committed at exit), reads it back (a read view), forwarder killed idle.
export CKPTFWD_JOB_ID=$job0-1
with_lib "$FW" "$CAP/a.dat" 4M >/dev/null || fail "job 1 failed"
with_lib cmp -s "$CAP/a.dat" "$DIRECT/a.dat" || fail "job 1 read back other bytes"
dir1=$(sessions | grep -- "-$CKPTFWD_JOB_ID-") || fail "no session directory of job 1"
compgen -G "$dir1/r*.data" >/dev/null || fail "job 1 left no read view: the test shows nothing"
kill_forwarders
[[ -d $dir1 ]] || fail "the killed forwarder's directory is already gone: the test shows nothing"
ok "job 1's killed forwarder left $(ls "$dir1" | tr '\n' ' ')"
# What a kill at other moments leaves (recovery.h's rule): a committed version's data whose
# .meta already went, and a version whose OPEN never replied (empty .meta). Neither is a
# version to recover.
head -c 100000 /dev/urandom >"$dir1/v9.data"
head -c 1000 /dev/urandom >"$dir1/v8.data"
: >"$dir1/v8.meta"

# Job 2, into a directory (and store) of its own: a staged version not committed when its
# forwarder is killed (within the batch window).
export CKPTFWD_JOB_ID=$job0-2
CAP=$T/ckpt2 STORE=$T/ckpt2/.ckptfwd CAPTURE="$T/ckpt2/*"
mkdir -p "$CAP"
KILL_AFTER_CLOSE_EMPTY=1 CKPTFWD_EXIT_WAIT=0 \
  kill_after_close "$T/w2.out" "$CAP/b.dat" 2M
dir2=$(sessions | grep -- "-$CKPTFWD_JOB_ID-") || fail "no session directory of job 2"
compgen -G "$dir2/v*.data" >/dev/null || fail "job 2 left no staged version: the test shows nothing"

# Job 3, another job of the same user: its forwarder sweeps.
export CKPTFWD_JOB_ID=$job0-3
with_lib "$FW" "$CAP/c.dat" 1M >/dev/null || fail "job 3 failed"
wait_for "[[ ! -d '$dir1' ]]" 10 || fail "job 3's forwarder left job 1's dead session: $(ls "$dir1" | tr '\n' ' ')"
ok "job 1's session directory removed by the next job's forwarder"
[[ -d $dir2 ]] && compgen -G "$dir2/v*.data" >/dev/null ||
  fail "job 2's staged version (not in the store) was removed"
ok "job 2's staged version kept"
dir3=$(sessions | grep -- "-$CKPTFWD_JOB_ID-") || fail "no session directory of job 3"

# Job 2 again: its next forwarder commits the staged version; then its directory goes too.
export CKPTFWD_JOB_ID=$job0-2
with_lib cmp -s "$CAP/b.dat" "$DIRECT/b.dat" || fail "job 2's next forwarder did not give b.dat back"
drain
assert_store_has "$CAP/b.dat" "$DIRECT/b.dat"
ok "job 2's staged version committed by its next forwarder"
# Job 3's forwarder is alive (idle, CKPTFWD_IDLE_EXIT=60): job 2's sweep left it alone.
[[ -S $dir3/sock ]] || fail "job 2's forwarder swept the live session of job 3: $(ls "$dir3" 2>&1)"
CKPTFWD_JOB_ID=$job0-3 with_lib cmp -s "$CAP/c.dat" "$DIRECT/c.dat" || fail "job 3 lost c.dat"
ok "a live forwarder's session directory is left alone"
assert_verify_clean
# Job 3's forwarder is not this session's (cleanup stops only $CKPTFWD_JOB_ID's): stop it.
for pid in $(CKPTFWD_JOB_ID=$job0-3 session_forwarders); do kill -TERM "$pid" 2>/dev/null || true; done
