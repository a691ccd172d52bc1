#!/usr/bin/env bash
# make bench-ratio: compression ratio and speed of ckptfwd's merge schemes against
# general-purpose and floating-point compressors, on the same bytes, in one run.
#
#   tools/bench/bench_ratio.sh BUILD     (BUILD: the cmake build dir, default ./build)
#
# Data sets of 16 ranks' files each, made once and kept in BUILD/bench-ratio-data/
# (remade when missing or when their generator changed):
#   ncarg-seg-nc ncarg-str-nc ncarg-seg-h5 ncarg-str-h5
#       every float variable of >= 64 KiB of Debian's libncarg-data (104 variables,
#       47 MB), split across the ranks segmented (contiguous slabs) or strided (rows r,
#       r+16, ...), written as netCDF classic or HDF5 (tools/bench/bench_ratio_data.py)
#   demo-stencil3d
#       the demo application's raw checkpoints (16 ranks, mpiexec.mpich oversubscribed),
#       described by examples/demo.schema
#   particles
#       float64 positions (random walk) and velocities (noise) in raw files, described by
#       tools/bench/bench_particles.schema: the hard case
#   lammps-lj
#       LAMMPS's own binary restart files (Debian's lmp, 16 ranks with mpiexec.openmpi
#       oversubscribed, tools/bench/bench_lammps.in): per-atom records of 11 float64 slots
#       found by the LAMMPS inference, no schema. Left out, with a line saying so, where
#       lmp is not installed
#   lammps-bond
#       the same with a molecular style (tools/bench/bench_lammps_bond.in): every atom
#       bonded to its nearest neighbours, so each record ends in a list of bonds and the
#       records have several lengths (one flat array of float64 for the inference)
#   openfoam-cavity
#       OpenFOAM's own binary field files: Debian's icoFoam on the lid-driven cavity of
#       tests/integration/data/openfoam_cavity refined to 400 x 400 cells, decomposed for
#       16 ranks (mpiexec.openmpi oversubscribed), after 20 time steps: each rank's U, p and
#       phi of that time (48 files), found by the OpenFOAM inference, no schema. Left out
#       where OpenFOAM is not installed
#   gromacs-water
#       GROMACS's own checkpoints: Debian's gmx mdrun (one thread) on a box of SPC water
#       (tools/bench/bench_gromacs.mdp), 16 replicas of it from other velocity and
#       thermostat seeds, as a -multidir ensemble runs them, 200 steps each: each replica's
#       md.cpt (16 files), positions and velocities found by the GROMACS inference, no
#       schema. Left out where gmx is not installed
# On each set:
#   ckptfwd     bench_ratio_driver: fwd::write_container for every scheme and group size,
#               one writer thread, every file read back and compared byte for byte
#   CLI anchors gzip -6 per file and concatenated (mcrEngine's Agnostic baseline),
#               zstd -1/-3/-19 and xz -6 concatenated, single-threaded, timed both ways,
#               each checked to give the concatenation back
#   lib anchors bench_anchors: Blosc (zstd 1, shuffle), fpzip and zfp reversible on each
#               float variable merged across ranks (when built)
#   lossy       bench_lossy: the opt-in lossy chains (quantization + Lorenzo, + wavelet,
#               the selector's choice with and without the wavelet) on the same float
#               variables at bounds of 1e-2, 1e-3 and 1e-4 of each one's value range,
#               every value checked against its bound
# Output: tables on stdout, BUILD/bench-ratio.json, BUILD/bench-ratio.svg and
# BUILD/bench-ratio-lossy.svg
# (tools/bench/bench_ratio_report.py). Exit status 1 when any restore is not byte-exact
# or a run fails, 2 on a setup problem.
# Environment: BENCH_RATIO_SETS (a subset of the sets above), BENCH_RATIO_SCHEMES
# (comma-separated), BENCH_RATIO_GROUPS (comma-separated), BENCH_RATIO_SLOW=0 (skip the
# slow anchors zstd -19 and xz -6), BENCH_RATIO_LOSSY=0 (skip the lossy chains),
# BENCH_RATIO_DEMO_SIZE ("48 48 48": cells per rank),
# BENCH_RATIO_PARTICLES (32768 per rank), BENCH_RATIO_LAMMPS ("40 40 20 200": fcc cells
# along x y z, 4 atoms each, and time steps), BENCH_RATIO_LAMMPS_BOND ("30 30 15 100", the
# same), BENCH_RATIO_OPENFOAM ("400 400 20": cells
# along x and y, and time steps), BENCH_RATIO_GROMACS ("6 200": the box's edge in nm, and
# time steps).
set -euo pipefail

BUILD=${1:-build}
[ -d "$BUILD" ] || { echo "bench_ratio.sh: build dir '$BUILD' does not exist; run 'make'" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
EXAMPLES=$(cd "$HERE/../../examples" && pwd)
FOAM_CASE=$(cd "$HERE/../../tests/integration/data/openfoam_cavity" && pwd)
PY=/usr/bin/python3  # Debian's: netCDF4, h5py and numpy are installed for it
DRIVER=$BUILD/bin/bench_ratio_driver
ANCHORS=$BUILD/bin/bench_anchors
LOSSY_BIN=$BUILD/bin/bench_lossy
LOSSY=${BENCH_RATIO_LOSSY:-1}
DATA=$BUILD/bench-ratio-data
WORK=$BUILD/bench-ratio-tmp
RECORDS=$WORK/records.jsonl
read -r -a SETS <<<"${BENCH_RATIO_SETS:-ncarg-seg-nc ncarg-str-nc ncarg-seg-h5 ncarg-str-h5 demo-stencil3d particles lammps-lj lammps-bond openfoam-cavity gromacs-water}"
SCHEMES=${BENCH_RATIO_SCHEMES:-agnostic,agnostic-block,aware,aware-block,auto}
GROUPS_=${BENCH_RATIO_GROUPS:-1,2,4,8,16}
SLOW=${BENCH_RATIO_SLOW:-1}
RANKS=16

for f in "$DRIVER" "$BUILD/bin/stencil3d" "$BUILD/bin/ckptfwd-h5infer"; do
  [ -x "$f" ] || { echo "bench_ratio.sh: $f is missing; run 'make'" >&2; exit 2; }
done
for t in gzip zstd xz mpiexec.mpich cmp; do
  command -v "$t" >/dev/null || { echo "bench_ratio.sh: '$t' not found; run 'make deps'" >&2; exit 2; }
done
"$PY" -c 'import netCDF4, h5py, numpy' 2>/dev/null ||
  { echo "bench_ratio.sh: $PY lacks netCDF4, h5py or numpy (make deps)" >&2; exit 2; }
[ -x "$ANCHORS" ] || echo "bench_ratio.sh: $ANCHORS not built (Blosc, fpzip or zfp missing): no library anchors" >&2

rm -rf "$WORK" && mkdir -p "$WORK" "$DATA"
: >"$RECORDS"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.4f", b-a}'; }

# --- data sets ---------------------------------------------------------------------------
# A set is reused when its stamp records the same recipe (generator source and options; for
# the programs' sets also the steps below that run them).
recipe() {
  case $1 in
    lammps-* | openfoam-* | gromacs-*) declare -f make_set lammps_set gromacs_set ;;
  esac
  case $1 in
    ncarg-*) cat "$HERE/bench_ratio_data.py" ;;
    demo-stencil3d) echo "${BENCH_RATIO_DEMO_SIZE:-48 48 48}"; cat "$EXAMPLES/stencil3d.cc" ;;
    particles) echo "${BENCH_RATIO_PARTICLES:-32768}"; cat "$HERE/bench_ratio_data.py" ;;
    lammps-lj) echo "${BENCH_RATIO_LAMMPS:-40 40 20 200}"; cat "$HERE/bench_lammps.in"
      dpkg-query -W -f='${Version}' lammps 2>/dev/null ;;
    lammps-bond) echo "${BENCH_RATIO_LAMMPS_BOND:-30 30 15 100}"; cat "$HERE/bench_lammps_bond.in"
      dpkg-query -W -f='${Version}' lammps 2>/dev/null ;;
    openfoam-cavity) echo "${BENCH_RATIO_OPENFOAM:-400 400 20}"; cat "$FOAM_CASE"/*/*
      dpkg-query -W -f='${Version}' openfoam 2>/dev/null ;;
    gromacs-water) echo "${BENCH_RATIO_GROMACS:-6 200}"; cat "$HERE/bench_gromacs.mdp"
      cat "$HERE/../../tests/integration/data/gmx_rdtscp_shim.c"
      dpkg-query -W -f='${Version}' gromacs 2>/dev/null ;;
  esac | md5sum | cut -d' ' -f1
}
# lammps_set DIR INPUT "CX CY CZ STEPS" NAME: Debian's lmp (built with Open MPI) on 16
# ranks writes NAME.<rank>.restart into DIR; the header file (NAME.base.restart, under
# 1 KiB) is left out: the set is the 16 ranks' files.
lammps_set() {
  local dir=$1 input=$2 cx cy cz steps
  read -r cx cy cz steps <<<"$3"
  mpiexec.openmpi --allow-run-as-root --oversubscribe -n "$RANKS" lmp -in "$input" \
    -var cx "$cx" -var cy "$cy" -var cz "$cz" -var steps "$steps" -var dir "$dir" \
    -log none -screen none >/dev/null
  rm -f "$dir/$4.base.restart"
}
# gromacs_set DIR "EDGE STEPS": a cubic box of SPC water EDGE nm wide, and 16 replicas of
# it (gen-seed and ld-seed 1000 + replica) run for STEPS steps by gmx mdrun, one thread
# each, one after the other; DIR gets each replica's final checkpoint as r<NN>.cpt. Where
# the CPU's CPUID does not list rdtscp, the shim of test_gromacs_checkpoint.sh lets mdrun
# start (see tests/integration/data/gmx_rdtscp_shim.c).
gromacs_set() {
  local dir=$1 edge steps work=$WORK/gmx r preload=""
  read -r edge steps <<<"$2"
  rm -rf "$work" && mkdir -p "$work"
  if ! grep -qw rdtscp /proc/cpuinfo; then
    cc -shared -fPIC -O2 -o "$work/shim.so" "$HERE/../../tests/integration/data/gmx_rdtscp_shim.c" -ldl
    preload=$work/shim.so
  fi
  (
    cd "$work"
    gmx solvate -cs spc216.gro -box "$edge" "$edge" "$edge" -o water.gro >solvate.log 2>&1
    printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spc.itp"\n[ system ]\nwater\n[ molecules ]\nSOL %d\n' \
      "$(awk 'NR == 2 { print $1 / 3 }' water.gro)" >topol.top
    for ((r = 0; r < RANKS; r++)); do
      sed -e "s/@STEPS@/$steps/" -e "s/@SEED@/$((1000 + r))/g" "$HERE/bench_gromacs.mdp" >md.mdp
      gmx grompp -f md.mdp -c water.gro -p topol.top -o md.tpr >grompp.log 2>&1
      env ${preload:+LD_PRELOAD=$preload} gmx mdrun -s md.tpr -deffnm md -nt 1 >mdrun.log 2>&1
      cp md.cpt "$dir/r$(printf %02d $r).cpt"
      rm -f md.* ./#*
    done
  ) || { echo "bench_ratio.sh: gmx failed (logs in $work)" >&2; return 2; }
  rm -rf "$work"
}
make_set() {
  local set=$1 dir=$DATA/$1
  rm -rf "$dir" && mkdir -p "$dir"
  case $set in
    ncarg-*)
      local dist fmt
      dist=$(cut -d- -f2 <<<"$set"); fmt=$(cut -d- -f3 <<<"$set")
      "$PY" "$HERE/bench_ratio_data.py" ncarg "$dir" "$dist" "$fmt" >/dev/null ;;
    demo-stencil3d)
      local nx ny nz
      read -r nx ny nz <<<"${BENCH_RATIO_DEMO_SIZE:-48 48 48}"
      # One checkpoint after 10 steps, without the library: the files as the application
      # writes them (ckpt_10_r<rank>.bin).
      mpiexec.mpich -n "$RANKS" "$BUILD/bin/stencil3d" --size "$nx" "$ny" "$nz" --steps 10 \
        --ckpt-every 10 --ckpt-dir "$dir" --quiet >/dev/null ;;
    particles)
      "$PY" "$HERE/bench_ratio_data.py" particles "$dir" "${BENCH_RATIO_PARTICLES:-32768}" ;;
    lammps-lj)
      lammps_set "$dir" "$HERE/bench_lammps.in" "${BENCH_RATIO_LAMMPS:-40 40 20 200}" lj ;;
    lammps-bond)
      lammps_set "$dir" "$HERE/bench_lammps_bond.in" "${BENCH_RATIO_LAMMPS_BOND:-30 30 15 100}" bond ;;
    openfoam-cavity)
      local cx cy steps case=$WORK/foam r f
      read -r cx cy steps <<<"${BENCH_RATIO_OPENFOAM:-400 400 20}"
      rm -rf "$case" && cp -r "$FOAM_CASE" "$case"
      # Refined, 16 subdomains (4 x 4), time step 1e-4 s (a Courant number of 0.4 at 400
      # cells; 2e-4 diverged), the fields of the last step written in binary.
      sed -i "s/(40 40 1)/($cx $cy 1)/" "$case/system/blockMeshDict"
      sed -i -e 's/^numberOfSubdomains .*/numberOfSubdomains 16;/' -e 's/n (2 1 1);/n (4 4 1);/' \
        "$case/system/decomposeParDict"
      sed -i -e "s/^endTime .*/endTime $(awk -v n="$steps" 'BEGIN{print n/10000}');/" \
        -e 's/^deltaT .*/deltaT 0.0001;/' -e "s/^writeInterval .*/writeInterval $steps;/" \
        "$case/system/controlDict"
      (
        set +eu
        source /usr/share/openfoam/etc/bashrc >/dev/null 2>&1
        set -e
        cd "$case"
        blockMesh >blockMesh.log 2>&1
        decomposePar >decomposePar.log 2>&1
        mpiexec.openmpi --allow-run-as-root --oversubscribe -n "$RANKS" icoFoam -parallel >icoFoam.log 2>&1
      ) || { echo "bench_ratio.sh: the OpenFOAM case failed (logs in $case)" >&2; return 2; }
      for ((r = 0; r < RANKS; r++)); do
        for f in U p phi; do
          cp "$case/processor$r/$(awk -v n="$steps" 'BEGIN{print n/10000}')/$f" "$dir/r$(printf %02d $r)_$f"
        done
      done
      rm -rf "$case" ;;
    gromacs-water)
      gromacs_set "$dir" "${BENCH_RATIO_GROMACS:-6 200}" ;;
    *) echo "bench_ratio.sh: unknown data set '$set'" >&2; return 2 ;;
  esac
  recipe "$set" >"$dir/.recipe"
}
set_files() {  # the set's files in rank order
  find "$DATA/$1" -maxdepth 1 -type f ! -name '.*' | sort -V
}
set_count() {  # how many files the set has: one per rank, openfoam-cavity three
  case $1 in
    openfoam-cavity) echo $((3 * RANKS)) ;;
    *) echo "$RANKS" ;;
  esac
}
set_schema() {
  case $1 in
    demo-stencil3d) echo "$EXAMPLES/demo.schema" ;;
    particles) echo "$HERE/bench_particles.schema" ;;
  esac
}

# The sets of programs that are not installed are left out, with a line saying so.
kept=()
for s in "${SETS[@]}"; do
  if [[ $s == lammps-* ]] && ! { command -v lmp && command -v mpiexec.openmpi; } >/dev/null; then
    echo "bench_ratio.sh: lmp or mpiexec.openmpi not found (make deps): no $s set" >&2
  elif [ "$s" = openfoam-cavity ] && ! { [ -f /usr/share/openfoam/etc/bashrc ] &&
    command -v mpiexec.openmpi; } >/dev/null; then
    echo "bench_ratio.sh: OpenFOAM or mpiexec.openmpi not found (make deps): no openfoam-cavity set" >&2
  elif [[ $s == gromacs-* ]] && ! command -v gmx >/dev/null; then
    echo "bench_ratio.sh: gmx not found (make deps): no $s set" >&2
  else
    kept+=("$s")
  fi
done
SETS=("${kept[@]}")
for s in "${SETS[@]}"; do
  if [ "$(cat "$DATA/$s/.recipe" 2>/dev/null)" != "$(recipe "$s")" ]; then
    printf 'preparing %s ... ' "$s"
    make_set "$s"
    echo "done"
  fi
  n=$(set_files "$s" | wc -l)
  [ "$n" -eq "$(set_count "$s")" ] ||
    { echo "bench_ratio.sh: $DATA/$s has $n files, expected $(set_count "$s")" >&2; exit 2; }
done

# --- CLI anchors ---------------------------------------------------------------------------
# cli_anchor SET NAME LEVEL_ARGS...: the tool on the concatenation, timed one thread both
# ways; the decompressed bytes must be the concatenation.
cli_record() {  # SET NAME RAW STORED CSEC DSEC
  awk -v s="$1" -v n="$2" -v r="$3" -v o="$4" -v c="$5" -v d="$6" 'BEGIN{
    printf "{\"kind\":\"cli\",\"set\":\"%s\",\"anchor\":\"%s\",\"ok\":true,\"raw_bytes\":%d,\"stored_bytes\":%d,\"ratio\":%.4f,\"compress_s\":%.4f,\"decompress_s\":%.4f,\"compress_mbs\":%.2f,\"decompress_mbs\":%.2f}\n",
      s, n, r, o, r/o, c, d, r/1e6/c, r/1e6/d }' >>"$RECORDS"
}
# cpu_of IN OUT CMD...: runs CMD <IN >OUT and prints the CPU seconds (user + system) it
# took, like the process CPU time of the in-process figures: MB/s per core, not skewed by
# other processes on the machine.
cpu_of() {
  local in=$1 out=$2 TIMEFORMAT='%3U %3S'
  shift 2
  { time "$@" <"$in" >"$out" ; } 2>"$WORK/cpu.t"
  awk '{printf "%.4f", $1 + $2}' "$WORK/cpu.t"
}
cli_anchor() {
  local set=$1 name=$2 tool=$3
  shift 3
  local cat=$WORK/cat.bin out=$WORK/cat.z back=$WORK/cat.back cs ds
  cs=$(cpu_of "$cat" "$out" "$tool" "$@" -c)
  ds=$(cpu_of "$out" "$back" "$tool" -d -c)
  cmp -s "$cat" "$back" || { echo "bench_ratio.sh: $set: $name does not give the bytes back" >&2; return 1; }
  cli_record "$set" "$name" "$(stat -c %s "$cat")" "$(stat -c %s "$out")" "$cs" "$ds"
}
gzip_per_file() {
  local set=$1 f out=$WORK/one.gz raw=0 stored=0 cs=0 ds=0 c d
  while read -r f; do
    c=$(cpu_of "$f" "$out" gzip -6 -c)
    d=$(cpu_of "$out" "$WORK/one.back" gzip -d -c)
    cmp -s "$f" "$WORK/one.back" || { echo "bench_ratio.sh: $set: gzip -6 of $f does not give the bytes back" >&2; return 1; }
    raw=$((raw + $(stat -c %s "$f"))); stored=$((stored + $(stat -c %s "$out")))
    cs=$(awk -v a="$cs" -v b="$c" 'BEGIN{print a+b}')
    ds=$(awk -v a="$ds" -v b="$d" 'BEGIN{print a+b}')
  done < <(set_files "$set")
  cli_record "$set" "gzip-6-per-file" "$raw" "$stored" "$cs" "$ds"
}

# --- runs ----------------------------------------------------------------------------------
rc=0
start=$(now)
echo "bench-ratio: ${#SETS[@]} data sets x ($SCHEMES) x groups $GROUPS_; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for s in "${SETS[@]}"; do
  mapfile -t files < <(set_files "$s")
  schema=$(set_schema "$s")
  sargs=()
  [ -n "$schema" ] && sargs=(--schema "$schema")
  printf '%-16s %s MB: ckptfwd' "$s" "$(cat "${files[@]}" | wc -c | awk '{printf "%.1f", $1/1e6}')"
  "$DRIVER" --set "$s" --work "$WORK" --schemes "$SCHEMES" --groups "$GROUPS_" "${sargs[@]}" \
    "${files[@]}" >>"$RECORDS" || rc=1
  if [ -x "$ANCHORS" ]; then
    printf ', blosc/fpzip/zfp'
    "$ANCHORS" --set "$s" "${sargs[@]}" "${files[@]}" >>"$RECORDS" || rc=1
  fi
  if [ "$LOSSY" != 0 ]; then
    printf ', lossy'
    lrc=0
    "$LOSSY_BIN" --set "$s" "${sargs[@]}" "${files[@]}" >>"$RECORDS" 2>"$WORK/lossy.err" || lrc=$?
    # (a set without float variables has nothing to show here)
    if [ "$lrc" -ne 0 ] && ! grep -q 'no float variables' "$WORK/lossy.err"; then
      cat "$WORK/lossy.err" >&2
      rc=1
    fi
  fi
  printf ', gzip'
  cat "${files[@]}" >"$WORK/cat.bin"
  gzip_per_file "$s" || rc=1
  cli_anchor "$s" gzip-6 gzip -6 || rc=1
  printf ', zstd'
  cli_anchor "$s" zstd-1 zstd -q -1 -T1 || rc=1
  cli_anchor "$s" zstd-3 zstd -q -3 -T1 || rc=1
  if [ "$SLOW" != 0 ]; then
    printf ' -19'
    cli_anchor "$s" zstd-19 zstd -q -19 -T1 || rc=1
    printf ', xz'
    cli_anchor "$s" xz-6 xz -6 -T1 || rc=1
  fi
  echo " ($(elapsed "$start" "$(now)" | cut -d. -f1) s)"
done
rm -f "$WORK"/cat.* "$WORK"/one.*

"$PY" "$HERE/bench_ratio_report.py" "$RECORDS" "$BUILD/bench-ratio.json" "$BUILD/bench-ratio.svg" || rc=1
echo "load average at the end: $(cut -d' ' -f1 /proc/loadavg); records: $RECORDS"
[ "$rc" -eq 0 ] || echo "bench_ratio.sh: FAILED: some run failed or some restore was not byte-exact (see above)" >&2
exit "$rc"
