#!/usr/bin/env bash
# One settings file for a job (docs/settings.md): CKPTFWD_CONFIG names a file holding the
# capture globs and the other settings, and the library, the forwarder and `ckptfwd` read
# it alike, the environment overriding it.
#   1. Globs, KEEP and switches in the file only (no CKPTFWD_CAPTURE, no job id): an MPI
#      job's files land in the store the file's globs give, restore byte for byte, and
#      `ckptfwd drain` with the same file finds the job's forwarder; `ckptfwd config` says
#      each value and the file line it came from, and exits 0.
#   2. The environment overrides the file: CKPTFWD_KEEP=1 over the file's keep = 3 keeps
#      one version of a file written three times.
#   3. A bad library value in the file (exit_wait = maybe) is said on the application's
#      stderr with the file and line; a misspelt key of the file and a misspelt variable
#      make `ckptfwd config` exit 1 naming the setting meant.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
need_cmd mpiexec.mpich
# The job id comes from the file's globs.
ckf_no_job_id

RUN=$T/run
mkdir -p "$RUN/ckpt" "$DIRECT"
for r in 0 1; do "$WRITER" write "$DIRECT" --rank $r >/dev/null; done
cat >"$RUN/job.conf" <<CONF
# the job's settings
capture = ckpt/*
KEEP = 3
direct_write = yes   # any switch word
CKPTFWD_EXIT_WAIT = on
CONF

# --- 1. globs and settings from the file ----------------------------------------------------
(
  cd "$RUN"
  # (the forwarder outlives the job, so that drain has one to find: stopped before part 2)
  export CKPTFWD_CONFIG=$RUN/job.conf CKPTFWD_IDLE_EXIT=60 CKPTFWD_LOG_LEVEL=info
  timeout 150 mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" \
    sh -c 'exec "$0" write ckpt --rank "$PMI_RANK"' "$WRITER" >"$T/run.out" 2>&1 ||
    fail "the job with its globs in CKPTFWD_CONFIG exited $?: $(cat "$T/run.out")"
  timeout 60 "$CLI" drain >"$T/drain.out" 2>&1 ||
    fail "ckptfwd drain with only CKPTFWD_CONFIG set did not find the job: $(cat "$T/drain.out")"
)
[[ -s "$RUN/ckpt/.ckptfwd/MANIFEST" ]] ||
  fail "no store at the file's globs ($RUN/ckpt/.ckptfwd): the globs of CKPTFWD_CONFIG were not read: $(cat "$T/run.out")"
grep -q "^drained" "$T/drain.out" || fail "ckptfwd drain did not find the job's forwarder: $(cat "$T/drain.out")"
(cd "$RUN" && CKPTFWD_CONFIG=$RUN/job.conf "$CLI" config >"$T/config.out" 2>"$T/config.err") ||
  fail "ckptfwd config of a good file exited $?: $(cat "$T/config.err")"
n_direct=$(find "$DIRECT" -type f | wc -l)
n_live=$("$CLI" ls "$RUN/ckpt/.ckptfwd" --json | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"]))')
[[ $n_live -eq $n_direct ]] || fail "the store lists $n_live files, the direct run wrote $n_direct"
restore_store "$RUN/ckpt/.ckptfwd" "$OUT"
assert_restored_tree "$DIRECT" "$RUN/ckpt" "$OUT"
for want in "CKPTFWD_CAPTURE *ckpt/\* *$RUN/job.conf:2" "CKPTFWD_KEEP *3 *$RUN/job.conf:3" \
  "CKPTFWD_DIRECT_WRITE *yes *$RUN/job.conf:4" "CKPTFWD_CONFIG *$RUN/job.conf *environment"; do
  grep -q "^$want" "$T/config.out" || fail "ckptfwd config has no line '$want': $(cat "$T/config.out")"
done
grep -q "^store: *$RUN/ckpt/.ckptfwd$" "$T/config.out" || fail "ckptfwd config names another store: $(cat "$T/config.out")"
# The forwarder a rank started early got the file's settings as the ranks have them: none
# retired for "other settings" (the library's digest covers what it hands on from the file).
grep -q "runs with other settings" "$CKPTFWD_LOG" &&
  fail "a forwarder retired for other settings: $(grep "runs with other settings" "$CKPTFWD_LOG" | head -2)"
ok "globs, keep and switches from CKPTFWD_CONFIG: $n_live files captured and restored; config says where each came from"

# --- 2. the environment overrides the file ---------------------------------------------------
# (a new forwarder: the one of part 1 runs with the file's keep = 3 and the same job id)
stop_local_forwarders
wait_for "[[ -z \"\$(forwarders_with_env CKPTFWD_STAGE_DIR=$CKPTFWD_STAGE_DIR)\" ]]" 30 ||
  fail "part 1's forwarder did not exit"
rm -rf "$OUT" && mkdir -p "$OUT"
(
  cd "$RUN"
  export CKPTFWD_CONFIG=$RUN/job.conf CKPTFWD_KEEP=1
  for v in 1 2 3; do
    timeout 60 env LD_PRELOAD="$LIB" "$WRITER" big ckpt/again.bin $((100 + v))K >"$T/again.out" 2>&1 ||
      fail "version $v of ckpt/again.bin exited $?: $(cat "$T/again.out")"
    timeout 60 "$CLI" drain >/dev/null 2>&1 || fail "drain after version $v exited $?"
  done
)
"$WRITER" big "$T/again.bin" 103K
versions=$("$CLI" ls "$RUN/ckpt/.ckptfwd" --all 2>/dev/null | grep -c "again.bin") || true
[[ $versions -eq 1 ]] ||
  fail "CKPTFWD_KEEP=1 over the file's keep = 3: $versions versions of again.bin stored: $("$CLI" ls "$RUN/ckpt/.ckptfwd" --all)"
restore_store "$RUN/ckpt/.ckptfwd" "$OUT"
assert_same_bytes "$T/again.bin" "$(restored_file "$OUT" "$RUN/ckpt/again.bin")" "again.bin"
ok "the environment's CKPTFWD_KEEP=1 overrides the file's keep = 3 (1 version kept)"

# --- 3. bad values and misspellings -----------------------------------------------------------
printf 'capture = ckpt/*\nexit_wait = maybe\nkepp = 2\n' >"$RUN/bad.conf"
(
  cd "$RUN"
  export CKPTFWD_CONFIG=$RUN/bad.conf
  # (the library logs to stderr by default: lib.sh points CKPTFWD_LOG at a file)
  timeout 60 env -u CKPTFWD_LOG LD_PRELOAD="$LIB" "$WRITER" big ckpt/bad.bin 10K >"$T/bad.out" 2>&1 ||
    fail "the application with a bad library value in the file exited $?: $(cat "$T/bad.out")"
  grep -qF "CKPTFWD_EXIT_WAIT='maybe' (from $RUN/bad.conf:2)" "$T/bad.out" ||
    fail "the application's stderr does not name exit_wait = maybe and bad.conf:2: $(cat "$T/bad.out")"
  rc=0
  CKPTFWD_STATS_FIEL=x "$CLI" config >"$T/badconfig.out" 2>"$T/badconfig.err" || rc=$?
  [[ $rc -eq 1 ]] || fail "ckptfwd config with bad settings exited $rc, not 1: $(cat "$T/badconfig.err")"
  for want in "$RUN/bad.conf:3: 'kepp' is not a setting (did you mean KEEP?)" \
    "CKPTFWD_STATS_FIEL is not a setting (did you mean CKPTFWD_STATS_FILE?)" \
    "CKPTFWD_EXIT_WAIT='maybe': expected 1/0, true/false, yes/no or on/off ($RUN/bad.conf:2)"; do
    grep -qF "$want" "$T/badconfig.err" || fail "ckptfwd config does not say \"$want\": $(cat "$T/badconfig.err")"
  done
)
ok "a bad value in the file is named with its line on the application's stderr; config exits 1 naming the fixes"

# --- 4. only effective values count; a relative file name is said ------------------------------
printf 'capture = ckpt/*\nkeep = x\nkeep = 2\n' >"$RUN/over.conf"
CKPTFWD_CONFIG=$RUN/over.conf "$CLI" config >"$T/over.out" 2>&1 ||
  fail "ckptfwd config with keep = x overridden by keep = 2 exited $?: $(cat "$T/over.out")"
CKPTFWD_CONFIG=$RUN/job.conf CKPTFWD_KEEP=x "$CLI" config >"$T/envbad.out" 2>&1 &&
  fail "ckptfwd config with CKPTFWD_KEEP=x over the file exited 0: $(cat "$T/envbad.out")"
rc=0
(cd "$RUN" && CKPTFWD_CONFIG=job.conf "$CLI" config >"$T/rel.out" 2>&1) || rc=$?
[[ $rc -eq 1 ]] && grep -q "CKPTFWD_CONFIG=job.conf is relative" "$T/rel.out" ||
  fail "a relative CKPTFWD_CONFIG is not said (exit $rc): $(cat "$T/rel.out")"
ok "a value overridden is not checked, the effective one is; a relative CKPTFWD_CONFIG is said"
