#!/usr/bin/env bash
# MPI-IO over MPICH/ROMIO: mpiio_writer (tests/mpiio) writes 9 shared N->1 files
# and one file per rank through every MPI-IO write variant (independent and collective,
# explicit offsets, individual and shared file pointers, split collectives, non-blocking,
# subarray views of MPI_DOUBLE, set_size, preallocate, sync, delete, collective-buffering
# and data-sieving hints), at 4 and at 8 ranks. For each rank count, against a run without
# the library (the oracle):
#   - under the library the written paths are not regular files on disk and no rank fell
#     back to direct writes,
#   - `ckptfwd verify` is clean and `ckptfwd restore` gives sha256-identical files and
#     nothing else (the deleted scratch files and ROMIO's hidden shared-pointer files gone),
#   - a second mpiexec.mpich in read mode under the library (the restart) checks every byte
#     with the matching read variants and prints the direct run's digests.
# Then the 4-rank run again with the ranks split over two simulated nodes (hydra MPMD,
# CKPTFWD_NODE_ID n0 / n1: two forwarders, one store): each node commits exactly the bytes
# its ranks wrote as an overlay, and restore and the restart reassemble the file.
# sync_visible.dat checks MPI's sync-barrier-sync rule while writing: after it, a rank
# reads through its open handle what a rank on the other node wrote.
# Last, a job that reads its checkpoint back before it ends (writeread, as ph5example
# does), at 8 ranks over three simulated nodes of 3, 2 and 3 ranks.
#
# Each scenario runs in a subshell, so one failing scenario still lets the others report
# (the test fails at the end if any non-pending scenario failed).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
MW=$BUILD/bin/mpiio_writer
if [[ ! -x "$MW" ]]; then
  command -v mpicc.mpich >/dev/null 2>&1 || skip "mpicc.mpich not found, mpiio_writer not built (apt install libmpich-dev)"
  fail "$MW is missing: build first (cmake --build $BUILD --target mpiio_writer)"
fi
RUN_LIMIT=40 # seconds per mpiexec; a healthy run takes a few

# The direct runs (oracle): files and read-mode digests at each rank count.
for n in 4 8; do
  mkdir -p "$T/direct$n"
  timeout $RUN_LIMIT mpiexec.mpich -n $n "$MW" write "$T/direct$n" >"$T/direct$n.write.out" 2>&1 ||
    fail "direct run of mpiio_writer write at $n ranks failed: $(tail -5 "$T/direct$n.write.out")"
  timeout $RUN_LIMIT mpiexec.mpich -n $n "$MW" read "$T/direct$n" >"$T/direct$n.digest" 2>"$T/direct$n.read.err" ||
    fail "direct run of mpiio_writer read at $n ranks failed: $(tail -5 "$T/direct$n.read.err")"
done
ok "direct runs at 4 and 8 ranks wrote and verified $(find "$T/direct8" -type f | wc -l) files (8 ranks)"

# Runs mpiio_writer MODE DIR at N ranks, on one node or (NODES=2) split over n0 and n1.
run_writer() {
  local mode=$1 dir=$2 n=$3 nodes=$4 half=$(($3 / 2))
  if [[ $nodes -eq 1 ]]; then
    timeout $RUN_LIMIT env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich -n "$n" "$MW" "$mode" "$dir"
  else
    timeout $RUN_LIMIT env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich \
      -n $half -env CKPTFWD_NODE_ID n0 "$MW" "$mode" "$dir" : \
      -n $half -env CKPTFWD_NODE_ID n1 "$MW" "$mode" "$dir"
  fi
}

# scenario NAME N NODES: write under the library, check disk, store, restore, restart read.
scenario() {
  local name=$1 n=$2 nodes=$3
  local direct=$T/direct$n cap=$T/$name out=$T/$name.restored f node
  mkdir -p "$cap" "$out"
  CAPTURE="$cap/*"
  export CKPTFWD_STATS_FILE=$T/$name.stats.jsonl # this scenario's fallbacks only
  run_writer write "$cap" "$n" "$nodes" >"$T/$name.write.out" 2>&1 ||
    fail "[$name] LD_PRELOAD=libckptfwd-mpich.so mpiexec.mpich -n $n mpiio_writer write $cap exited $?; expected 0: $(tail -8 "$T/$name.write.out")"
  ok "[$name] mpiio_writer write under the library exited 0"

  local on_disk=()
  for f in "$direct"/*; do
    [[ -f "$cap/$(basename "$f")" ]] && on_disk+=("$(basename "$f")")
  done
  [[ ${#on_disk[@]} -eq 0 ]] || fail "[$name] written directly to disk (not captured): ${on_disk[*]}"
  local fb
  fb=$(stats_sum "$CKPTFWD_STATS_FILE" client fallbacks) || fail "[$name] bad stats file: $fb"
  [[ $fb -eq 0 ]] || fail "[$name] $fb client fallbacks to direct writes: $(grep '"client"' "$CKPTFWD_STATS_FILE" | head -3)"
  ok "[$name] nothing reached the disk directly, no fallbacks"

  if [[ $nodes -eq 1 ]]; then
    drain
  else
    CKPTFWD_NODE_ID=n0 drain
    CKPTFWD_NODE_ID=n1 drain
  fi
  local store=$cap/.ckptfwd
  [[ $(count_containers "$store") -ge 1 ]] || fail "[$name] no container in $store: $(ls -la "$store" 2>&1 | head -5)"
  timeout 60 "$CLI" verify "$store" >"$T/$name.verify.out" 2>&1 ||
    fail "[$name] ckptfwd verify $store exited non-zero: $(tail -5 "$T/$name.verify.out")"
  # The MPI_DOUBLE subarray view reaches the container as a dtype hint on its data bytes
  # (the 256-byte header written through an MPI_BYTE view stays untyped).
  timeout 60 "$CLI" ls --all "$store" >"$T/$name.ls.out" 2>&1 ||
    fail "[$name] ckptfwd ls --all $store exited non-zero: $(tail -5 "$T/$name.ls.out")"
  grep -A1 '/subarray.dat$' "$T/$name.ls.out" | grep -q 'typed: F64LE' ||
    fail "[$name] subarray.dat (MPI_DOUBLE file view) has no F64LE dtype hint in ckptfwd ls --all: $(grep -A1 subarray.dat "$T/$name.ls.out" | head -4)"
  # On one node the views become its variable map: each of the two MPI_DOUBLE subarray
  # views is a variable of its global shape, together every typed byte (shared files
  # across nodes are overlays: no map).
  if [[ $nodes -eq 1 ]]; then
    timeout 60 "$CLI" ls --vars --json "$store" >"$T/$name.vars.json" 2>&1 ||
      fail "[$name] ckptfwd ls --vars --json exited non-zero: $(tail -5 "$T/$name.vars.json")"
    /usr/bin/python3 - "$T/$name.vars.json" "$cap/subarray.dat" "$(stat -c %s "$direct/subarray.dat")" \
      "$direct/subarray.dat" <<'PY' ||
import json, re, sys
ls, path, size = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
f = [x for x in ls["files"] if x["path"] == path]
assert f and f[0]["source"] == "mpiio", f"no MPI-IO map for {path}: {f}"
gnx, gny = (int(x) for x in re.search(rb"gnx=(\d+) gny=(\d+)", open(sys.argv[4], "rb").read(256)).groups())
for var in (0, 1):
    k = [x for x in ls["keys"] if x["key"] == "mpiio/array%d_F64LE_Array2D" % var]
    assert k and any(h["path"] == path for h in k[0]["shapes"]), f"no 2-D F64LE view variable {var}: {ls['keys']}"
    shape = [h["shape"] for h in k[0]["shapes"] if h["path"] == path][0]
    assert shape == [gnx, gny], f"view {var} of shape {shape}, not the header's {gnx}x{gny}"
assert f[0]["mapped_bytes"] == size - 256, f"mapped {f[0]['mapped_bytes']} of {size} bytes (256-byte untyped header)"
PY
      fail "[$name] subarray.dat's variable map is not its MPI_DOUBLE view (above)"
  fi
  timeout 60 "$CLI" restore "$store" --to "$out" </dev/null >"$T/$name.restore.out" 2>&1 ||
    fail "[$name] ckptfwd restore exited non-zero: $(tail -5 "$T/$name.restore.out")"

  # Every file is compared (not just up to the first difference): which MPI-IO paths break
  # is the diagnosis. The restart read runs even when restore differed.
  local problems=() r n_ok=0 n_direct=0 n_out
  for f in "$direct"/*; do
    n_direct=$((n_direct + 1))
    r=$(restored_file "$out" "$cap/$(basename "$f")")
    if [[ -z "$r" ]]; then
      problems+=("restore did not produce $(basename "$f")")
    elif [[ "$(sha "$f")" != "$(sha "$r")" ]]; then
      problems+=("restored $(basename "$f") differs: size $(stat -c %s "$r") (direct $(stat -c %s "$f")), first difference $(cmp "$f" "$r" 2>&1 | sed -E 's/.*(byte [0-9]+).*/\1/;s/.*EOF.*/EOF/')")
    else
      n_ok=$((n_ok + 1))
    fi
  done
  n_out=$(find "$out" -type f | wc -l)
  [[ $n_out -eq $n_direct ]] ||
    problems+=("restore wrote $n_out files, the direct run has $n_direct: $(cd "$out" && find . -type f | sort | tr '\n' ' ')")
  if [[ ${#problems[@]} -eq 0 ]]; then
    ok "[$name] ckptfwd restore: $n_direct files sha256-identical to the direct run, nothing else"
  else
    for r in "${problems[@]}"; do echo "FAIL: [$name] $r" >&2; done
    echo "[$name] restore: $n_ok of $n_direct files identical" >&2
  fi

  if ! run_writer read "$cap" "$n" "$nodes" >"$T/$name.digest" 2>"$T/$name.read.err"; then
    problems+=("restart read failed")
    echo "FAIL: [$name] restart: mpiio_writer read under the library exited non-zero: $(grep -m8 -E 'MISMATCH|failed|error' "$T/$name.read.err" || tail -5 "$T/$name.read.err")" >&2
  elif ! diff "$direct.digest" "$T/$name.digest" >"$T/$name.digest.diff"; then
    problems+=("restart digests differ")
    echo "FAIL: [$name] restart digests differ from the direct run (< direct, > library): $(grep '^[<>]' "$T/$name.digest.diff" | head -12)" >&2
  else
    ok "[$name] restart read through the library: every byte and size as in the direct run"
  fi
  [[ ${#problems[@]} -eq 0 ]] || fail "[$name] ${#problems[@]} problem(s), listed above"
}

failed=()
for n in 4 8; do
  set +e
  (scenario "ranks$n" $n 1)
  rc=$?
  set -e
  [[ $rc -eq 0 ]] || failed+=("ranks$n")
done

set +e
(scenario "twonodes" 4 2)
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  failed+=("twonodes")
else
  ok "two simulated nodes: capture, restore and restart exact"
fi

# samejob: write and read back in one job over three nodes, against the same direct job.
samejob() {
  local direct=$T/samejob.direct cap=$T/samejob
  mkdir -p "$direct" "$cap"
  timeout $RUN_LIMIT mpiexec.mpich -n 8 "$MW" writeread "$direct" >"$direct.out" 2>&1 ||
    fail "[samejob] direct run of mpiio_writer writeread at 8 ranks failed: $(tail -5 "$direct.out")"
  timeout $RUN_LIMIT env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$cap/*" mpiexec.mpich \
    -n 3 -env CKPTFWD_NODE_ID n0 "$MW" writeread "$cap" : \
    -n 2 -env CKPTFWD_NODE_ID n1 "$MW" writeread "$cap" : \
    -n 3 -env CKPTFWD_NODE_ID n2 "$MW" writeread "$cap" >"$cap.out" 2>"$cap.err" ||
    fail "[samejob] mpiio_writer writeread over three nodes under the library exited non-zero: $(grep -m8 -E 'MISMATCH|failed|error' "$cap.err" || tail -5 "$cap.err")"
  diff <(grep '^digest' "$direct.out") <(grep '^digest' "$cap.out") >"$cap.diff" ||
    fail "[samejob] digests differ from the direct job (< direct, > library): $(grep '^[<>]' "$cap.diff" | head -12)"
  ok "[samejob] a job reading back its own checkpoint over three nodes sees every byte"
}
set +e
(samejob)
rc=$?
set -e
[[ $rc -eq 0 ]] || failed+=("samejob")

[[ ${#failed[@]} -eq 0 ]] || fail "scenarios failed: ${failed[*]} (details above)"
ok "MPI-IO capture at 4 and 8 ranks and over two nodes: restore and restart byte-exact"
