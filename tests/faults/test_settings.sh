#!/usr/bin/env bash
# Settings (docs/settings.md).
#   1. Relative CKPTFWD_STORE, CKPTFWD_LOG, CKPTFWD_STATS_FILE and CKPTFWD_STAGE_DIR mean
#      what they say relative to the job's cwd, although the forwarder works in `/`; the job
#      takes seconds (a relative stage dir used to stall every process ~60 s).
#   2. A table of invalid values, each under `mpiexec.mpich -n 2` (the forwarder's stderr is
#      not the terminal there): the application exits 0 with its files written directly and
#      byte-exact, and its stderr names the key. Switches the library reads itself
#      (DISABLE, NO_SPAWN, EXIT_WAIT) warn and keep their default.
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
ckf_std_dirs
"$WRITER" big "$DIRECT/a.bin" 300K

# --- 1. relative paths --------------------------------------------------------------------
# A name of this run only: what a run of an older build left in / cannot pass for this one.
REL=ckf-rel-$$-$RANDOM
JOB=$T/job
mkdir -p "$JOB/ckpt"
saved_env=("CKPTFWD_STAGE_DIR=$CKPTFWD_STAGE_DIR" "CKPTFWD_LOG=$CKPTFWD_LOG" "CKPTFWD_STATS_FILE=$CKPTFWD_STATS_FILE")
start=$SECONDS
(
  cd "$JOB"
  export CKPTFWD_STORE=$REL/store CKPTFWD_LOG=$REL/ckptfwd.log CKPTFWD_STATS_FILE=$REL/stats.jsonl \
    CKPTFWD_STAGE_DIR=$REL/stage CKPTFWD_LOG_LEVEL=info
  mkdir -p "$REL"
  timeout 100 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$JOB/ckpt/*" "$WRITER" big ckpt/a.bin 300K ||
    fail "the application under relative settings exited $?"
  timeout 60 "$CLI" drain || fail "drain with a relative CKPTFWD_STAGE_DIR exited $?"
)
took=$((SECONDS - start))
[[ $took -le 20 ]] || fail "the job with relative settings took $took s"
[[ -s "$JOB/$REL/store/MANIFEST" ]] || fail "relative CKPTFWD_STORE: no $JOB/$REL/store/MANIFEST ($(ls -d "/$REL" 2>/dev/null))"
[[ ! -e "/$REL" ]] || fail "something was created in /$REL (resolved against the forwarder's cwd)"
wait_for "[[ -s '$JOB/$REL/ckptfwd.log' ]]" 10 || fail "relative CKPTFWD_LOG: no $JOB/$REL/ckptfwd.log"
wait_for "[[ -s '$JOB/$REL/stats.jsonl' ]]" 20 || fail "relative CKPTFWD_STATS_FILE: no $JOB/$REL/stats.jsonl after the forwarder's exit"
restore_store "$JOB/$REL/store" "$OUT"
assert_same_bytes "$DIRECT/a.bin" "$(restored_file "$OUT" "$JOB/ckpt/a.bin")" "restored a.bin"
export "${saved_env[@]}"
ok "relative settings resolved against the job's cwd ($took s)"

# --- 2. invalid values under mpiexec ---------------------------------------------------------
need_cmd mpiexec.mpich
"$WRITER" big "$DIRECT/r.0" 100K --rank 0
"$WRITER" big "$DIRECT/r.1" 100K --rank 1
unset CKPTFWD_LOG   # the library's lines go to the application's stderr, as under mpiexec
bad_values=(
  CKPTFWD_LEVEL=abc CKPTFWD_LEVEL=3x CKPTFWD_LEVEL=-1 CKPTFWD_LEVEL=99
  CKPTFWD_WRITERS=0 "CKPTFWD_WRITERS= 4" CKPTFWD_CODEC=lz4 CKPTFWD_SCHEME=fast
  CKPTFWD_CHUNK=1K CKPTFWD_CHUNK=12Q CKPTFWD_STAGE_LIMIT=-5 CKPTFWD_BATCH_BYTES=1.5G
  CKPTFWD_BATCH_WINDOW_MS=1e3 CKPTFWD_WAVE_WINDOW_MS=3s CKPTFWD_IDLE_EXIT=-1 CKPTFWD_KEEP=many CKPTFWD_GROUP_SIZE=+3
  CKPTFWD_LOG_LEVEL=verbose CKPTFWD_DIRECT_READ=maybe CKPTFWD_GROUP=2
)
lib_switches=(CKPTFWD_DISABLE=abc CKPTFWD_NO_SPAWN=maybe CKPTFWD_EXIT_WAIT=sometimes)
i=0
for kv in "${bad_values[@]}" "${lib_switches[@]}"; do
  i=$((i + 1))
  key=${kv%%=*}
  export CKPTFWD_NODE_ID=bad$i   # a session (and forwarder) of its own
  d=$CAP/bad$i
  mkdir -p "$d"
  set +e
  timeout 100 env "$kv" mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
    sh -c 'exec "$0" big "$1.$PMI_RANK" 100K' "$WRITER" "$d/r" >"$T/bad$i.out" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 0 ]] || fail "$kv: the application under mpiexec exited $rc: $(tail -5 "$T/bad$i.out")"
  grep -q "$key" "$T/bad$i.out" || fail "$kv: nothing on stderr names $key: $(tail -5 "$T/bad$i.out")"
  for r in 0 1; do
    if [[ " ${lib_switches[*]} " == *" $kv "* ]]; then
      with_lib cmp "$DIRECT/r.$r" "$d/r.$r" || fail "$kv: rank $r's file differs"
    else
      cmp -s "$DIRECT/r.$r" "$d/r.$r" || fail "$kv: rank $r's file is not written directly, byte-exact"
    fi
  done
  echo "  $kv: exit 0, files intact; $(grep -m1 "$key" "$T/bad$i.out" | cut -c1-200)"
done
ok "${#bad_values[@]} invalid forwarder values and ${#lib_switches[@]} invalid switches: named, application unharmed"

# The CLI reads CKPTFWD_DIRECT_READ itself: a bad value is a usage error naming it.
set +e
CKPTFWD_DIRECT_READ=2 "$CLI" restore "$T/no-store" --to "$T/no-out" >"$T/cli_bad.out" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "ckptfwd restore with CKPTFWD_DIRECT_READ=2 exited $rc, not 2"
grep -q "CKPTFWD_DIRECT_READ='2': expected 1/0, true/false, yes/no or on/off" "$T/cli_bad.out" ||
  fail "ckptfwd's message does not name CKPTFWD_DIRECT_READ: $(cat "$T/cli_bad.out")"
[[ ! -e "$T/no-out" ]] || fail "ckptfwd restore created its target despite the bad setting"
ok "the CLI names a bad CKPTFWD_DIRECT_READ and does nothing"
