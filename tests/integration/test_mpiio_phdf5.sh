#!/usr/bin/env bash
# A parallel HDF5 writer and a separate parallel HDF5 restart reader
# (tests/mpiio/phdf5_writer.c, phdf5_reader.c; libhdf5-mpich via h5pcc.mpich) round-trip
# through the library. 4 ranks write one shared file collectively (a hyperslab of rows per
# rank, a contiguous float64 and a chunked int32 dataset, attributes). Checks:
#   - the writer succeeds under the library and nothing lands on disk directly,
#   - the reader, a separate mpiexec under the library, reads every value back (each rank
#     reads another rank's rows),
#   - `ckptfwd restore` gives a file h5diff finds identical to a run without the library,
#     and the reader without the library accepts the restored file.
# Then the same with the 4 ranks split over two simulated nodes (hydra MPMD, 2 ranks with
# CKPTFWD_NODE_ID n0 and 2 with n1: two forwarders, one store): the shared file is
# committed by each node as an overlay of the extents its ranks wrote, the restart reader
# (split the same way) reads every value back, and restore + h5diff match the direct run.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich h5diff
PW=$BUILD/bin/phdf5_writer
PR=$BUILD/bin/phdf5_reader
if [[ ! -x "$PW" || ! -x "$PR" ]]; then
  command -v h5pcc.mpich >/dev/null 2>&1 || skip "h5pcc.mpich not found, phdf5_writer/reader not built (apt install libhdf5-mpich-dev)"
  fail "$PW or $PR is missing: build first (cmake --build $BUILD --target phdf5_writer phdf5_reader)"
fi
NAME=phdf5_ckpt.h5
DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
mkdir -p "$DIRECT" "$CAP" "$OUT"
CAPTURE="$CAP/*"

timeout 60 mpiexec.mpich -n 4 "$PW" "$DIRECT" >"$T/direct.out" 2>&1 || fail "direct phdf5_writer failed: $(tail -5 "$T/direct.out")"
timeout 60 mpiexec.mpich -n 4 "$PR" "$DIRECT" >"$T/direct.read" 2>&1 || fail "direct phdf5_reader failed: $(tail -5 "$T/direct.read")"
ok "direct run: $(tail -1 "$T/direct.read")"

timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich -n 4 "$PW" "$CAP" >"$T/write.out" 2>&1 ||
  fail "LD_PRELOAD=libckptfwd-mpich.so mpiexec.mpich -n 4 phdf5_writer $CAP exited $?; expected 0: $(grep -m5 -E 'minor|failed|bort' "$T/write.out" || tail -5 "$T/write.out")"
[[ ! -f "$CAP/$NAME" ]] || fail "$CAP/$NAME is a regular file on disk: not captured"
ok "phdf5_writer under the library exited 0, $NAME captured"

# The restart reader runs before the drain on purpose: it must see the newest version
# whether it is still staged or already committed.
timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE" mpiexec.mpich -n 4 "$PR" "$CAP" >"$T/restart.out" 2>&1 ||
  fail "restart: phdf5_reader under the library exited $?: $(grep -m5 -E 'MISMATCH|minor|failed|bort' "$T/restart.out" || tail -5 "$T/restart.out")"
ok "restart reader under the library: $(grep phdf5_reader "$T/restart.out" | tail -1)"

drain
STORE=$CAP/.ckptfwd
timeout 60 "$CLI" verify "$STORE" >"$T/verify.out" 2>&1 || fail "ckptfwd verify $STORE exited non-zero: $(tail -5 "$T/verify.out")"
restore_store "$STORE" "$OUT"
r=$(restored_file "$OUT" "$CAP/$NAME")
[[ -n "$r" ]] || fail "restore did not produce $NAME: $(cd "$OUT" && find . -type f | tr '\n' ' ')"
h5diff "$DIRECT/$NAME" "$r" >"$T/h5diff.out" 2>&1 || fail "h5diff direct vs restored $NAME: $(head -8 "$T/h5diff.out")"
ok "restored $NAME: h5diff finds no difference from the direct run"

# export_like_h5py STORE TAG: ckptfwd export of each dataset of the shared file (found by
# HDF5 inference: on one node from the stored map, from two nodes on the stacked layers)
# equals, element for element, h5py's read of the direct run's file.
export_like_h5py() {
  local store=$1 tag=$2 ds
  /usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "   (no h5py: export not compared)"; return 0; }
  for ds in fields/temperature fields/ids; do
    "$CLI" export "$store" --var "/$ds" --file "$NAME" --to "$T/$tag.npy" 2>"$T/$tag.err" ||
      fail "[$tag] ckptfwd export /$ds exited $?: $(cat "$T/$tag.err")"
    /usr/bin/python3 - "$T/$tag.npy" "$DIRECT/$NAME" "$ds" <<'PY' || fail "[$tag] export of /$ds differs from h5py's read: $(cat "$T/$tag.err")"
import sys
import h5py
import numpy as np
got = np.load(sys.argv[1])
want = h5py.File(sys.argv[2], "r")[sys.argv[3]][()]
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
assert np.array_equal(got, want)
PY
  done
  ok "[$tag] ckptfwd export of /fields/temperature and /fields/ids equals h5py's read of the direct file"
}
export_like_h5py "$STORE" "one node"

mkdir -p "$T/plain" && cp "$r" "$T/plain/$NAME"
timeout 60 mpiexec.mpich -n 4 "$PR" "$T/plain" >"$T/plain.read" 2>&1 ||
  fail "phdf5_reader without the library rejects the restored file: $(grep -m5 -E 'MISMATCH|rror|failed' "$T/plain.read" || tail -5 "$T/plain.read")"
ok "phdf5_reader without the library accepts the restored file"

# ---- Two simulated nodes: writer and restart reader split 2+2 over n0 and n1. ----
# run_split PROG DIR: PROG DIR under the library, ranks 0-1 on n0 and 2-3 on n1.
run_split() {
  timeout 60 env LD_PRELOAD="$LIB_MPICH" CKPTFWD_CAPTURE="$CAPTURE2" mpiexec.mpich \
    -n 2 -env CKPTFWD_NODE_ID n0 "$1" "$2" : \
    -n 2 -env CKPTFWD_NODE_ID n1 "$1" "$2"
}
CAP2=$T/ckpt2
OUT2=$T/restored2
mkdir -p "$CAP2" "$OUT2"
CAPTURE2="$CAP2/*"
export CKPTFWD_STATS_FILE=$T/twonodes.stats.jsonl # this part's fallbacks only
run_split "$PW" "$CAP2" >"$T/write2.out" 2>&1 ||
  fail "[two nodes] phdf5_writer split over n0/n1 under libckptfwd-mpich.so exited $?; expected 0: $(grep -m5 -E 'minor|failed|bort' "$T/write2.out" || tail -5 "$T/write2.out")"
[[ ! -f "$CAP2/$NAME" ]] || fail "[two nodes] $CAP2/$NAME is a regular file on disk: not captured"
fb=$(stats_sum "$CKPTFWD_STATS_FILE" client fallbacks) || fail "[two nodes] bad stats file: $fb"
[[ $fb -eq 0 ]] || fail "[two nodes] $fb client fallbacks to direct writes: $(grep '"client"' "$CKPTFWD_STATS_FILE" | head -3)"
ok "[two nodes] phdf5_writer split over n0/n1 exited 0, $NAME captured, no fallbacks"

# The restart reader before the drains, as above: staged or committed, it must see it all.
run_split "$PR" "$CAP2" >"$T/restart2.out" 2>&1 ||
  fail "[two nodes] restart: phdf5_reader split over n0/n1 under the library exited $?: $(grep -m5 -E 'MISMATCH|minor|failed|bort' "$T/restart2.out" || tail -5 "$T/restart2.out")"
ok "[two nodes] restart reader split over n0/n1: $(grep phdf5_reader "$T/restart2.out" | tail -1)"

CKPTFWD_NODE_ID=n0 drain
CKPTFWD_NODE_ID=n1 drain
STORE2=$CAP2/.ckptfwd
# Each node committed its part of the shared file as an overlay (not a whole file that
# would overwrite the other node's bytes).
for node in n0 n1; do
  grep -q $'^overlay\tc-'"$node"'-' "$STORE2/MANIFEST" ||
    fail "[two nodes] no overlay record from $node in $STORE2/MANIFEST: $(cut -f1-2 "$STORE2/MANIFEST" | head -8 | tr '\n' ' ')"
done
ok "[two nodes] MANIFEST has overlays from n0 and n1"
timeout 60 "$CLI" verify "$STORE2" >"$T/verify2.out" 2>&1 || fail "[two nodes] ckptfwd verify $STORE2 exited non-zero: $(tail -5 "$T/verify2.out")"
timeout 60 "$CLI" restore "$STORE2" --to "$OUT2" </dev/null >"$T/restore2.out" 2>&1 ||
  fail "[two nodes] ckptfwd restore exited non-zero: $(tail -5 "$T/restore2.out")"
r=$(restored_file "$OUT2" "$CAP2/$NAME")
[[ -n "$r" ]] || fail "[two nodes] restore did not produce $NAME: $(cd "$OUT2" && find . -type f | tr '\n' ' ')"
h5diff "$DIRECT/$NAME" "$r" >"$T/h5diff2.out" 2>&1 || fail "[two nodes] h5diff direct vs restored $NAME: $(head -8 "$T/h5diff2.out")"
ok "[two nodes] restored $NAME: h5diff finds no difference from the direct run"
export_like_h5py "$STORE2" "two nodes"
grep -q "written from several nodes: its [0-9]* layers stacked" "$T/two nodes.err" ||
  fail "[two nodes] export did not stack the overlays: $(cat "$T/two nodes.err")"
