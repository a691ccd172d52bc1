#!/usr/bin/env bash
# Problems reach the user (docs/troubleshooting.md, "Where to look when something goes wrong"). With
# CKPTFWD_LOG unset, under `mpiexec.mpich -n 2` (nobody reads a detached forwarder's
# stderr), each rank one process writing its 8 files (ckpt_writer write):
#   a schema that does not fit the files: exit 0, restore byte-exact; the forwarder's log
#     file is <store>/logs/<job>.<node>.log, every line names time, node, job and pid, the
#     per-file warnings are collapsed (3 written, the rest counted); each process's
#     stderr says it once;
#   a store that refuses commits (its MANIFEST a directory; the writer without fsync):
#     exit 75; the log has the
#     error, each process's stderr says it once with the store and the fix; once the store
#     is mended a drain commits and restore is byte-exact;
#   a bad setting: exit 0, the files written directly; the default log file has the error
#     naming the setting, and each process's stderr names it.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
need_cmd mpiexec.mpich
unset CKPTFWD_LOG
export CKPTFWD_EXIT_RETRY_S=2
for r in 0 1; do "$WRITER" write "$DIRECT" --rank $r >/dev/null; done
n_files=$(find "$DIRECT" -type f | wc -l)
[[ $n_files -eq 16 ]] || fail "the direct run wrote $n_files files, not 16"

# run_ranks OUT DIR [VAR=VALUE...]: both ranks write into DIR; mpiexec's exit status in rc.
run_ranks() {
  local out=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  rc=0
  timeout 120 env "$@" mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$dir/*" \
    sh -c 'exec "$0" write "$1" --rank "$PMI_RANK" $2' "$WRITER" "$dir" "${WRITE_ARGS:-}" >"$out" 2>&1 || rc=$?
}
# check_lines LOG NODE: every line has the time, node, job and pid.
check_lines() {
  local re="^ckptfwd-forwarder: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z node=$2 job=$CKPTFWD_JOB_ID pid=[0-9]+ (error|warn): "
  [[ -s $1 ]] || fail "no log file $1: $(find "$(dirname "$(dirname "$1")")" "$CKPTFWD_STAGE_DIR" -name '*.log' 2>/dev/null)"
  local bad
  bad=$(grep -Evc "$re" "$1") || true
  [[ $bad -eq 0 ]] || fail "$bad lines of $1 lack the time, node, job or pid: $(grep -Ev "$re" "$1" | head -3)"
}
wait_gone() {
  local i
  for ((i = 0; i < 100; i++)); do [[ -z "$(session_forwarders)" ]] && return; sleep 0.2; done
  fail "the forwarders of $CKPTFWD_JOB_ID did not exit: $(session_forwarders)"
}

# 1. A schema that does not fit.
printf 'file "*" little_endian\n  int64 n\n  float64 values[n]\n' >"$T/bad.schema"
A=$T/a
run_ranks "$T/a.out" "$A" CKPTFWD_NODE_ID=na CKPTFWD_SCHEMA="$T/bad.schema"
[[ $rc -eq 0 ]] || fail "with a schema that does not fit, mpiexec exited $rc: $(tail -5 "$T/a.out")"
said=$(grep -c '^ckptfwd: schema rule .* does not fit ' "$T/a.out") || true
[[ $said -eq 2 ]] || fail "the schema notice is on the ranks' stderr $said times, not once per process: $(cat "$T/a.out")"
grep -q "Log: $A/.ckptfwd/logs/$CKPTFWD_JOB_ID.na.log" "$T/a.out" || fail "the notice does not name the log file: $(head -2 "$T/a.out")"
wait_gone # (its exit says how many collapsed lines it did not write)
LOG=$A/.ckptfwd/logs/$CKPTFWD_JOB_ID.na.log
check_lines "$LOG" na
# (16 files and the .tmp names some are committed under first, fsynced: 16 or more warnings)
written=$(grep -c 'pid=[0-9]* warn: /.*: stored agnostic: schema rule' "$LOG") || true
[[ $written -eq 3 ]] || fail "$written per-file warnings written, not 3: $(cat "$LOG")"
counted=$(grep -o '[0-9]* more lines like this one were not written' "$LOG" | awk '{s += $1} END {print s + 0}')
[[ $((written + counted)) -ge 16 ]] || fail "$written written + $counted counted per-file warnings, not 16 or more: $(cat "$LOG")"
restore_store "$A/.ckptfwd" "$OUT/a"
assert_restored_tree "$DIRECT" "$A" "$OUT/a"
ok "a schema that does not fit: once on each rank's stderr; $LOG has $written lines and counts $counted more; restore byte-exact"

# 2. A store that refuses commits.
B=$T/b
mkdir -p "$B/.ckptfwd/MANIFEST"
# (without its fsyncs, which would fail with EIO and end the writer early)
WRITE_ARGS=--no-fsync run_ranks "$T/b.out" "$B" CKPTFWD_NODE_ID=nb
[[ $rc -eq 75 ]] || fail "with a store that refuses commits, mpiexec exited $rc, not 75: $(tail -5 "$T/b.out")"
said=$(grep -c "^ckptfwd: cannot commit to store $B/.ckptfwd: .*Fix: make $B/.ckptfwd writable" "$T/b.out") || true
[[ $said -eq 2 ]] || fail "the store notice is on the ranks' stderr $said times, not once per process: $(cat "$T/b.out")"
LOG=$B/.ckptfwd/logs/$CKPTFWD_JOB_ID.nb.log
check_lines "$LOG" nb
grep -q "error: cannot commit .* to store $B/.ckptfwd" "$LOG" || fail "$LOG has no commit error: $(cat "$LOG")"
rmdir "$B/.ckptfwd/MANIFEST"
CKPTFWD_NODE_ID=nb timeout 120 "$CLI" drain >"$T/drain.out" 2>&1 || fail "drain after mending the store failed: $(cat "$T/drain.out")"
restore_store "$B/.ckptfwd" "$OUT/b"
assert_restored_tree "$DIRECT" "$B" "$OUT/b"
ok "a store that refuses commits: exit 75, once on each rank's stderr with the fix, in $LOG; after mending it, restore byte-exact"

# 3. A bad setting.
C=$T/c
run_ranks "$T/c.out" "$C" CKPTFWD_NODE_ID=nc CKPTFWD_LEVEL=99
[[ $rc -eq 0 ]] || fail "with a bad setting, mpiexec exited $rc: $(tail -5 "$T/c.out")"
grep -q "CKPTFWD_LEVEL" "$T/c.out" || fail "no rank's stderr names CKPTFWD_LEVEL: $(cat "$T/c.out")"
for f in "$DIRECT"/*; do assert_same_bytes "$f" "$C/$(basename "$f")" "written directly"; done
LOG=$C/.ckptfwd/logs/$CKPTFWD_JOB_ID.nc.log
check_lines "$LOG" nc
grep -q "error: bad configuration: .*CKPTFWD_LEVEL" "$LOG" || fail "$LOG does not name the bad setting: $(cat "$LOG")"
ok "a bad setting: the files written directly, its key on the ranks' stderr and in $LOG"
