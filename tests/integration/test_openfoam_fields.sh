#!/usr/bin/env bash
# OpenFOAM (Debian's openfoam, icoFoam on the lid-driven cavity of
# tests/integration/data/openfoam_cavity, 40x40 cells, 2 ranks with Open MPI) writes its
# binary fields through the library: the whole case directory is captured (blockMesh's
# mesh, decomposePar's processor directories, the time directories icoFoam writes). The
# oracle is the same case run without the library. Checked:
#   - the store maps each field's binary lists (`ckptfwd ls --vars`: U/internalField F64LE
#     cells x 3, p/internalField, phi/internalField), without a schema;
#   - `ckptfwd restore` gives every file back byte for byte;
#   - icoFoam restarts from the captured time directory through the library (startFrom
#     latestTime, 20 more steps) and writes the bytes the run without the library writes.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd icoFoam blockMesh decomposePar mpiexec.openmpi
[[ -f /usr/share/openfoam/etc/bashrc ]] || skip "no /usr/share/openfoam/etc/bashrc"
ckf_std_dirs
set +u
# shellcheck disable=SC1091
source /usr/share/openfoam/etc/bashrc >/dev/null 2>&1 || true
set -u
SRC=$CKF_REPO/tests/integration/data/openfoam_cavity
cp -r "$SRC/." "$DIRECT/"
with_lib cp -r "$SRC/." "$CAP/" || fail "cp of the case into the captured directory failed"

foam() {  # CASE [under the library]: blockMesh, decomposePar, icoFoam on 2 ranks
  local dir=$1
  shift
  (cd "$dir" && "$@" blockMesh >"$T/blockMesh.log" 2>&1) || fail "blockMesh in $dir failed: $(tail -5 "$T/blockMesh.log")"
  (cd "$dir" && "$@" decomposePar >"$T/decompose.log" 2>&1) || fail "decomposePar in $dir failed: $(tail -5 "$T/decompose.log")"
  ico "$dir" "$@"
}
ico() {
  local dir=$1
  shift
  (cd "$dir" && "$@" timeout 300 mpiexec.openmpi --oversubscribe -n 2 icoFoam -parallel >"$T/ico.log" 2>&1) ||
    fail "icoFoam in $dir failed: $(tail -8 "$T/ico.log")"
}
foam "$DIRECT"
foam "$CAP" with_lib
for f in processor0/0.04/U processor1/0.04/p processor1/0.02/phi; do
  with_lib cmp "$CAP/$f" "$DIRECT/$f" || fail "$f read back through the library differs from the run without it"
done
ok "blockMesh, decomposePar and icoFoam ran under the library; fields read back exact"

drain
"$CLI" ls --vars "$STORE" >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --vars failed: $(tail -5 "$T/ls.txt")"
grep -q "^U/internalField_F64LE_Array2D .* 800x3" "$T/ls.txt" ||
  fail "ls --vars shows no U/internalField of 800 x 3 float64 per rank: $(grep -m3 internalField "$T/ls.txt")"
grep -q "^p/internalField_F64LE_Array1D " "$T/ls.txt" || fail "ls --vars shows no p/internalField"
grep -q "^phi/internalField_F64LE_Array1D " "$T/ls.txt" || fail "ls --vars shows no phi/internalField"
line=$(grep " $CAP/processor1/0.04/U\$" "$T/ls.txt") || fail "ls --vars does not list processor1/0.04/U"
[[ $line =~ ^\ *openfoam\  ]] || fail "processor1/0.04/U is not mapped by the OpenFOAM inference: $line"
grep -q "^points_F64LE_Array2D .* 3362x3" "$T/ls.txt" || fail "ls --vars shows no mesh points (3362 x 3)"
grep -q "^faces/labels_I32LE_Array1D " "$T/ls.txt" || fail "ls --vars shows no faces/labels"
ok "ls --vars maps the binary lists of every field and of the mesh by name"

restore_store "$STORE" "$OUT"
n=0
while IFS= read -r rel; do
  r=$(restored_file "$OUT" "$CAP/$rel")
  [[ -n "$r" && -f "$OUT/$rel" ]] || r=$OUT/$rel
  assert_same_bytes "$DIRECT/$rel" "$r" "restored $rel"
  n=$((n + 1))
done < <(cd "$DIRECT" && find . -type f | sed 's|^\./||')
[[ $(find "$OUT" -type f | wc -l) -eq $n ]] || fail "restore wrote $(find "$OUT" -type f | wc -l) files, the case has $n"
ok "all $n files of the case restore byte for byte"

# The restart: 20 more steps from the latest time directory.
EDIT=(sed -i -e 's/^startFrom .*/startFrom latestTime;/' -e 's/^endTime .*/endTime 0.06;/')
"${EDIT[@]}" "$DIRECT/system/controlDict"
with_lib "${EDIT[@]}" "$CAP/system/controlDict" || fail "sed -i of the captured system/controlDict failed"
ico "$DIRECT"
ico "$CAP" with_lib
for f in processor0/0.06/U processor1/0.06/p processor0/0.06/phi; do
  with_lib cmp "$CAP/$f" "$DIRECT/$f" || fail "the restarted run wrote another $f than the run without the library"
done
ok "icoFoam restarts from captured fields through the library and writes the same bytes"
echo "PASS: test_openfoam_fields"
