#!/usr/bin/env bash
# Every path setting that cannot be used names its key (docs/settings.md). Each value
# below under `mpiexec.mpich -n 2` (the forwarder's stderr is not the terminal there), as
# test_settings.sh does for bad values: the application exits 0, its files are written
# directly and byte-exact, and its stderr names the key:
#   CKPTFWD_LOG and CKPTFWD_STATS_FILE in a directory that does not exist (the forwarder
#   would have written nowhere once detached; the library's own lines too),
#   CKPTFWD_STORE=/proc/x (every commit would fail: EIO at exit, the key nowhere),
#   CKPTFWD_STAGE_DIR=/proc/x (the library named the session path only).
source "$(dirname "$0")/../integration/lib.sh"
ckf_init "$@"
ckf_std_dirs
need_cmd mpiexec.mpich
"$WRITER" big "$DIRECT/r.0" 100K --rank 0
"$WRITER" big "$DIRECT/r.1" 100K --rank 1
unset CKPTFWD_LOG # the library's lines go to the application's stderr, as under mpiexec
export CKPTFWD_EXIT_RETRY_S=2
unusable=(
  "CKPTFWD_LOG=$T/missing/ckptfwd.log" "CKPTFWD_STATS_FILE=$T/missing/stats.jsonl"
  CKPTFWD_STORE=/proc/x CKPTFWD_STAGE_DIR=/proc/x
)
i=0
for kv in "${unusable[@]}"; do
  i=$((i + 1))
  key=${kv%%=*}
  export CKPTFWD_NODE_ID=path$i # a session (and forwarder) of its own
  d=$CAP/path$i
  mkdir -p "$d"
  set +e
  timeout 100 env "$kv" mpiexec.mpich -n 2 env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" \
    sh -c 'exec "$0" big "$1.$PMI_RANK" 100K' "$WRITER" "$d/r" >"$T/path$i.out" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 0 ]] || fail "$kv: the application under mpiexec exited $rc: $(tail -5 "$T/path$i.out")"
  grep -q "$kv" "$T/path$i.out" || fail "$kv: nothing on stderr names $kv: $(tail -5 "$T/path$i.out")"
  for r in 0 1; do
    cmp -s "$DIRECT/r.$r" "$d/r.$r" || fail "$kv: rank $r's file is not written directly, byte-exact"
  done
  echo "  $kv: exit 0, files intact; $(grep -m1 "$key" "$T/path$i.out" | cut -c1-200)"
done
[[ ! -e /proc/x ]] || fail "/proc/x exists"
ok "${#unusable[@]} unusable path settings: each named with its key, the application unharmed"
