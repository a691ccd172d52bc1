#!/usr/bin/env bash
# GROMACS (Debian's gmx 2022, one thread) runs a box of water and checkpoints every 40 steps
# through the library: it writes md_stepN.cpt, copies md.cpt to md_prev.cpt (reading it back
# through the library), renames md_stepN.cpt over md.cpt, and checksums its md.log and
# md.edr into the checkpoint (reading them back too). Everything the run writes is captured.
# A run without the library is the oracle. A checkpoint holds its generation time and the
# checksum of md.log (whose timings differ from run to run), so a checkpoint is compared
# through GROMACS's own reader (`gmx dump -cp`, every field but those) and md.gro and md.edr
# byte for byte. Checked:
#   - the store maps positions and velocities of md.cpt and md_prev.cpt (`ckptfwd ls --vars`:
#     gromacs/x and gromacs/v, F32BE, atoms x 3), without a schema;
#   - `ckptfwd restore` gives back the bytes a new job reads through the library, and what
#     GROMACS reads in them equals the run without the library;
#   - GROMACS restarts from the captured checkpoint through the library (`-cpi`, appending
#     to md.log and md.edr after checking their checksums) and writes the same energies,
#     coordinates and checkpoint as the restart without it.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd gmx cc
ckf_std_dirs

# Debian's GROMACS is built to read the time stamp counter with rdtscp and stops at start
# when the CPU's CPUID does not list it, which some virtual machines do although they
# execute the instruction. There, a shim preloaded with the library makes mdrun warn
# instead (gmx_rdtscp_shim.c), after a probe shows the instruction runs.
GMX_PRELOAD=""
if ! grep -qw rdtscp /proc/cpuinfo; then
  printf 'int main(void){unsigned a,d,c;__asm__ volatile("rdtscp":"=a"(a),"=d"(d),"=c"(c));return 0;}\n' \
    >"$T/probe.c"
  cc -o "$T/probe" "$T/probe.c" && "$T/probe" 2>/dev/null ||
    skip "this CPU cannot execute rdtscp, which Debian's gmx mdrun uses"
  cc -shared -fPIC -O2 -o "$T/gmx_rdtscp_shim.so" "$CKF_REPO/tests/integration/data/gmx_rdtscp_shim.c" -ldl ||
    fail "the rdtscp shim does not compile"
  GMX_PRELOAD=$T/gmx_rdtscp_shim.so
fi

# 3,162 atoms of water, velocities and thermostat noise from fixed seeds: runs on one thread
# are deterministic (with the options of mdrun below).
(cd "$T" && gmx solvate -cs spc216.gro -box 3.2 3.2 3.2 -o water.gro >solvate.log 2>&1) ||
  fail "gmx solvate failed: $(tail -5 "$T/solvate.log")"
waters=$(awk 'NR == 2 { print $1 / 3 }' "$T/water.gro")
cat >"$T/topol.top" <<TOP
#include "oplsaa.ff/forcefield.itp"
#include "oplsaa.ff/spc.itp"
[ system ]
water
[ molecules ]
SOL $waters
TOP
cat >"$T/md.mdp" <<'MDP'
integrator    = md
nsteps        = 100
dt            = 0.002
cutoff-scheme = Verlet
coulombtype   = PME
rcoulomb      = 0.9
rvdw          = 0.9
tcoupl        = v-rescale
tc-grps       = System
tau-t         = 0.1
ref-t         = 300
gen-vel       = yes
gen-temp      = 300
gen-seed      = 4321
ld-seed       = 1234
MDP
(cd "$T" && gmx grompp -f md.mdp -c water.gro -p topol.top -o md.tpr >grompp.log 2>&1) ||
  fail "gmx grompp failed: $(tail -5 "$T/grompp.log")"

# mdrun DIR NSTEPS [-cpi md.cpt]: NSTEPS steps (more, after a restart) in DIR, a checkpoint
# at every 40-step neighbour search (-cpt 0: an interval in minutes would put checkpoints
# where the clock says, and a checkpoint step changes the dynamics through the energies it
# computes); -reprod, else FFTW plans PME's transforms by timing them and the last digits
# of a run depend on the clock too; under the library when the caller sets CKF_GMX_LIB.
mdrun() {
  local dir=$1 nsteps=$2
  shift 2
  local preload=${CKF_GMX_LIB:-}
  [[ -n $GMX_PRELOAD ]] && preload=${preload:+$preload:}$GMX_PRELOAD
  (cd "$dir" && env ${preload:+LD_PRELOAD=$preload} ${CKF_GMX_LIB:+CKPTFWD_CAPTURE=$CAPTURE} \
    timeout 300 gmx mdrun -s "$T/md.tpr" -deffnm md -nt 1 -reprod -cpt 0 -nsteps "$nsteps" "$@" \
    >"$T/mdrun.out" 2>&1) || fail "gmx mdrun in $dir failed: $(tail -8 "$T/mdrun.out")"
}
# The checkpoint as GROMACS reads it, without the fields that differ between two runs.
dump_cpt() {
  gmx dump -cp "$1" 2>/dev/null | grep -v -e '^generation time' -e '^file_checksum' \
    -e '^file_offset_low' -e '^GROMACS build' || fail "gmx dump -cp $1 failed"
}

mdrun "$DIRECT" 100
CKF_GMX_LIB=$LIB mdrun "$CAP" 100
for f in md.cpt md_prev.cpt md.gro md.edr md.log; do
  [[ -f $DIRECT/$f ]] || fail "the run without the library wrote no $f"
  with_lib test -f "$CAP/$f" || fail "the run under the library left no $f"
done
ok "gmx mdrun checkpointed $waters waters every 40 steps with and without the library"

drain
"$CLI" ls --vars "$STORE" >"$T/ls.txt" 2>&1 || fail "ckptfwd ls --vars failed: $(tail -5 "$T/ls.txt")"
for v in x v; do
  grep -q "^gromacs/${v}_F32BE_Array2D " "$T/ls.txt" ||
    fail "ls --vars shows no gromacs/$v: $(head -5 "$T/ls.txt")"
done
for f in md.cpt md_prev.cpt; do
  line=$(grep " $CAP/$f\$" "$T/ls.txt") || fail "ls --vars does not list $f"
  [[ $line =~ ^\ *gromacs\  ]] || fail "$f is not mapped by the GROMACS inference: $line"
done
ok "ls --vars maps the positions and velocities of md.cpt and md_prev.cpt"

restore_store "$STORE" "$OUT"
for f in md.cpt md_prev.cpt md.gro md.edr md.log; do
  r=$(restored_file "$OUT" "$CAP/$f")
  [[ -n $r ]] || fail "restore did not produce $CAP/$f"
  with_lib cat "$CAP/$f" >"$T/live"
  assert_same_bytes "$T/live" "$r" "restored $f"
done
for f in md.gro md.edr; do
  assert_same_bytes "$DIRECT/$f" "$(restored_file "$OUT" "$CAP/$f")" "restored $f against the direct run"
done
for f in md.cpt md_prev.cpt; do
  dump_cpt "$DIRECT/$f" >"$T/direct.dump"
  dump_cpt "$(restored_file "$OUT" "$CAP/$f")" >"$T/restored.dump"
  [[ $(wc -l <"$T/direct.dump") -gt 10000 ]] || fail "gmx dump -cp of $f is short: $(head -3 "$T/direct.dump")"
  diff -q "$T/direct.dump" "$T/restored.dump" >/dev/null ||
    fail "GROMACS reads another state in the restored $f: $(diff "$T/direct.dump" "$T/restored.dump" | head -5)"
done
ok "restored files equal what the library reads; GROMACS reads the direct run's state in them"

mdrun "$DIRECT" 200 -cpi md.cpt
CKF_GMX_LIB=$LIB mdrun "$CAP" 200 -cpi md.cpt
grep -q "continuing from step 100" "$T/mdrun.out" ||
  fail "the captured run did not restart from its checkpoint: $(tail -5 "$T/mdrun.out")"
drain
for f in md.gro md.edr; do
  with_lib cat "$CAP/$f" >"$T/live"
  assert_same_bytes "$DIRECT/$f" "$T/live" "$f after the restart"
done
with_lib cat "$CAP/md.cpt" >"$T/live.cpt"
dump_cpt "$DIRECT/md.cpt" >"$T/direct.dump"
dump_cpt "$T/live.cpt" >"$T/captured.dump"
grep -q "^step = 300" "$T/direct.dump" || fail "the direct restart did not reach step 300"
diff -q "$T/direct.dump" "$T/captured.dump" >/dev/null ||
  fail "the restart under the library checkpointed another state: $(diff "$T/direct.dump" "$T/captured.dump" | head -5)"
ok "GROMACS restarts from the captured checkpoint, appends, and writes the same state"
echo "PASS: test_gromacs_checkpoint"
