#!/usr/bin/env bash
# Restart reads through the library against direct reads of the same files.
#   tools/bench/bench_restart.sh [BUILD] [ROUNDS]
# Writes N files of S bytes (default 10000 x 4K) and BIG_N files of BIG_S (default 4 x 128M,
# read by BIG_N processes: one file per rank) once directly and once under the library
# (the writer's forwarder commits and exits: CKPTFWD_IDLE_EXIT=1), then reads them back
# ROUNDS times, direct and through the library in turn, each library read a new job (a
# restart: a new forwarder, nothing staged). Every byte is checked (bench_smallfiles).
# Prints each read's seconds, then the medians and their ratio (library / direct).
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-3}
BIN=$BUILD/bin/bench_smallfiles
LIB=$BUILD/lib/libckptfwd.so
N=${N:-10000}
S=${S:-4096}
BIG_N=${BIG_N:-4}
BIG_S=${BIG_S:-128M}
for f in "$BIN" "$LIB"; do [[ -e $f ]] || { echo "missing $f: build first" >&2; exit 1; }; done
unset LD_PRELOAD CKPTFWD_CAPTURE CKPTFWD_STORE CKPTFWD_CONFIG CKPTFWD_STAGE_LIMIT 2>/dev/null || true
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-restart.XXXXXX")
STAGE=$(mktemp -d /dev/shm/bench-restart.XXXXXX)
export CKPTFWD_STAGE_DIR=$STAGE CKPTFWD_IDLE_EXIT=1 CKPTFWD_LOG=$W/ckptfwd.log
trap 'rm -rf "$W" "$STAGE"' EXIT

# Waits until no forwarder of job $1 runs (it committed everything and exited).
wait_gone() {
  local p exe i
  for ((i = 0; i < 600; i++)); do
    local alive=0
    for p in /proc/[0-9]*; do
      exe=$(readlink "$p/exe" 2>/dev/null) || continue
      [[ $exe == */ckptfwd-forwarder ]] || continue
      tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "CKPTFWD_JOB_ID=$1" && alive=1
    done
    ((alive)) || return 0
    sleep 0.1
  done
  echo "forwarder of job $1 did not exit" >&2
  exit 1
}

seconds() { sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# case NAME FILES SIZE PROCS
run_case() {
  local name=$1 files=$2 size=$3 procs=$4 r job d l
  local args=(--files "$files" --size "$size" --procs "$procs")
  "$BIN" write --dir "$W/$name-direct" "${args[@]}" >/dev/null
  job=bw-$name-$$
  CKPTFWD_JOB_ID=$job LD_PRELOAD=$LIB CKPTFWD_CAPTURE="$W/$name-cap/*" \
    "$BIN" write --dir "$W/$name-cap" "${args[@]}" >/dev/null
  wait_gone "$job"
  : >"$W/d" && : >"$W/l"
  for ((r = 1; r <= ROUNDS; r++)); do
    d=$("$BIN" read --dir "$W/$name-direct" "${args[@]}" | seconds)
    job=br-$name-$r-$$
    l=$(CKPTFWD_JOB_ID=$job LD_PRELOAD=$LIB CKPTFWD_CAPTURE="$W/$name-cap/*" \
      "$BIN" read --dir "$W/$name-cap" "${args[@]}" | seconds)
    wait_gone "$job"
    echo "$name round $r: direct ${d}s library ${l}s"
    echo "$d" >>"$W/d"
    echo "$l" >>"$W/l"
  done
  d=$(median <"$W/d")
  l=$(median <"$W/l")
  awk -v n="$name" -v d="$d" -v l="$l" -v f="$files" -v s="$size" 'BEGIN {
    printf "%s (%s x %s): median direct %.3fs, library %.3fs, ratio %.2f\n", n, f, s, d, l, l / d }'
  rm -rf "$W/$name-direct" "$W/$name-cap"
}

run_case small "$N" "$S" 1
run_case large "$BIG_N" "$BIG_S" "$BIG_N"
