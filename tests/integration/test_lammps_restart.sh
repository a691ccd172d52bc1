#!/usr/bin/env bash
# LAMMPS (Debian's lmp, Open MPI, 4 ranks) writes its own binary restart files through the
# library: periodic multi-file restarts (ckpt.<step>.<rank> and ckpt.<step>.base) and one
# single-file restart. The oracle is the same run without the library (LAMMPS runs are
# deterministic for a fixed number of ranks). Checked:
#   - the store maps the per-atom records of every rank file and of the single file
#     (`ckptfwd ls --vars`: lammps/atoms, F64LE, atoms x 11 values), without a schema;
#   - `ckptfwd restore` gives every file back byte for byte;
#   - LAMMPS restarts from a captured file through the library (read_restart, 20 more steps,
#     another restart) and writes the bytes the run without the library writes.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd lmp mpiexec.openmpi
ckf_std_dirs

{ cat "$CKF_REPO/tests/integration/data/lammps_lj.in"
  cat <<'IN'
write_restart   ${dir}/final.restart
write_restart   ${dir}/final.mpiio
IN
} >"$T/run.in"
cat >"$T/again.in" <<'IN'
read_restart    ${dir}/final.restart
neighbor        0.3 bin
fix             1 all nve
run             20
write_restart   ${dir}/again.restart
IN
cat >"$T/again_mpiio.in" <<'IN'
read_restart    ${dir}/final.mpiio
neighbor        0.3 bin
fix             1 all nve
run             20
write_restart   ${dir}/again_mpiio.restart
IN
lammps() {  # DIR INPUT [under the library]
  local dir=$1 in=$2
  shift 2
  "$@" timeout 300 mpiexec.openmpi --oversubscribe -n 4 lmp -in "$in" -var dir "$dir" \
    -log none -screen none >"$T/lmp.out" 2>&1 || fail "lmp -in $(basename "$in") in $dir failed: $(tail -5 "$T/lmp.out")"
}
lammps "$DIRECT" "$T/run.in"
lammps "$CAP" "$T/run.in" with_lib
[[ -n "$(with_lib ls "$CAP")" ]] || fail "no restart file in $CAP"
ok "lmp wrote $(ls "$DIRECT" | wc -l) restart files with and without the library"

drain
"$CLI" ls --vars "$STORE" >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --vars failed: $(tail -5 "$T/ls.txt")"
grep -q "^lammps/atoms_F64LE_Array2D .*columns.*r0: [0-9]*x11" "$T/ls.txt" ||
  fail "ls --vars shows no lammps/atoms record array coded by columns: $(head -3 "$T/ls.txt")"
for f in ckpt.30.0 ckpt.60.3 final.restart final.mpiio; do
  line=$(grep " $CAP/$f\$" "$T/ls.txt") || fail "ls --vars does not list $f"
  [[ $line =~ ^\ *lammps\ .*\ KiB ]] || fail "$f is not mapped by the LAMMPS inference: $line"
done
# The single file: every rank's 512 atoms of 11 float64 values (176 KiB) in the variable.
grep " $CAP/final.restart\$" "$T/ls.txt" | grep -q " 176.0 KiB " ||
  fail "final.restart does not hold 2048 x 11 values in lammps/atoms: $(grep final.restart "$T/ls.txt")"
# The MPI-IO layout (written by every rank at once through Open MPI's MPI-IO): the same.
grep " $CAP/final.mpiio\$" "$T/ls.txt" | grep -q " 176.0 KiB " ||
  fail "final.mpiio does not hold 2048 x 11 values in lammps/atoms: $(grep final.mpiio "$T/ls.txt")"
ok "ls --vars maps the per-atom records of the rank files, the single file and the MPI-IO file"

restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "every restart file restores byte for byte"

lammps "$DIRECT" "$T/again.in"
lammps "$CAP" "$T/again.in" with_lib
drain
with_lib cmp "$CAP/again.restart" "$DIRECT/again.restart" ||
  fail "the restart from a captured file wrote other bytes than the run without the library"
ok "LAMMPS restarts from a captured file through the library and writes the same bytes"
lammps "$DIRECT" "$T/again_mpiio.in"
lammps "$CAP" "$T/again_mpiio.in" with_lib
drain
with_lib cmp "$CAP/again_mpiio.restart" "$DIRECT/again_mpiio.restart" ||
  fail "the restart from a captured MPI-IO file wrote other bytes than the run without the library"
ok "LAMMPS restarts from a captured MPI-IO restart file through the library"

# A molecular style: every atom's record ends in its list of bonds, so records have several
# lengths (13 to 37 values here) and lammps/atoms is one flat array; the records chain step
# stores them field by field.
cat >"$T/bond.in" <<'IN'
units           lj
atom_style      bond
lattice         fcc 0.8442
region          box block 0 12 0 12 0 6
create_box      1 box bond/types 1 extra/bond/per/atom 12 extra/special/per/atom 60
create_atoms    1 box
mass            1 1.0
bond_style      harmonic
bond_coeff      1 100 1.19
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0
special_bonds   lj 0 1 1
create_bonds    many all all 1 1.0 1.3
velocity        all create 1.0 87287 loop geom
fix             1 all nve
timestep        0.001
run             50
write_restart   ${dir}/bond.%.restart
IN
cat >"$T/bond_again.in" <<'IN'
read_restart    ${dir}/bond.%.restart
special_bonds   lj 0 1 1
fix             1 all nve
timestep        0.001
run             20
write_restart   ${dir}/bond_again.restart
IN
lammps "$DIRECT" "$T/bond.in"
lammps "$CAP" "$T/bond.in" with_lib
drain
"$CLI" ls --vars "$STORE" >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --vars failed: $(tail -5 "$T/ls.txt")"
grep -q "^lammps/atoms_F64LE_Array1D .*records" "$T/ls.txt" ||
  fail "ls --vars shows no flat lammps/atoms coded by records: $(grep -m3 lammps/atoms "$T/ls.txt")"
line=$(grep " $CAP/bond.2.restart\$" "$T/ls.txt") || fail "ls --vars does not list bond.2.restart"
[[ $line =~ ^\ *lammps\  ]] || fail "bond.2.restart is not mapped by the LAMMPS inference: $line"
ok "the records of several lengths of a molecular style are stored field by field"
rm -rf "$OUT"
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "every restart file, the molecular ones too, restores byte for byte"
lammps "$DIRECT" "$T/bond_again.in"
lammps "$CAP" "$T/bond_again.in" with_lib
drain
with_lib cmp "$CAP/bond_again.restart" "$DIRECT/bond_again.restart" ||
  fail "the molecular restart from captured files wrote other bytes than the run without the library"
ok "LAMMPS restarts a molecular system from captured files and writes the same bytes"
echo "PASS: test_lammps_restart"
