#!/usr/bin/env bash
# One store shared by every simulated node on a real distributed file system (GlusterFS
# with its default options, one FUSE client per node: tests/integration/dfs.sh), the job's
# forwarders forming a group (src/forwarder/group/group.h): one node appends the MANIFEST
# records of all of them, and a file written from several nodes is committed by its owner.
#   part 1: posix_shared's patterns (header then all ranks, N-1 pwrite with and without
#           fsync, a file handed from rank to rank, one node renaming and unlinking
#           another node's files) on 2 nodes x 2 ranks and 4 nodes x 1:
#           every rank's read-back exact in the job, the store exact through another
#           node's client;
#   part 2: 2 nodes x 4 ranks x FILES small files x STEPS steps committing at once into the
#           one store: every file restored exactly through another node's client, each
#           path in exactly one record, `verify` clean;
#   part 3 (CKF_DFS_KILLS=1 or CKF_DFS_FULL=1 only): part 2 with each node's forwarder
#           killed once at a random moment: the same checks (about 2 minutes more, so
#           not in the suite's run). It used to fail in about 1 of 3 runs (a leader killed
#           after appending a member's records and before answering: the member appended
#           them again, with a broken chain), then, with that fixed, in 3 of 3 (a version
#           committed just before the kill was committed again by the next forwarder).
# FILES x STEPS is 50 x 4 here (the suite's time limit); CKF_DFS_FULL=1 runs 200 x 10 on 2
# and then 4 nodes, and the kills on 2 nodes (about 20 minutes on 2 cores).
# Before the group, part 2 broke the MANIFEST chain in 3 of 3 runs (records chained to
# stale ends, containers deleted under records, extra records).
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
source "$(dirname "$0")/../faults/lib_faults.sh"
source "$(dirname "$0")/dfs.sh"
need_cmd mpiexec.mpich
PS=$BUILD/bin/posix_shared
[[ -x "$PS" ]] || skip "posix_shared not built (needs mpicc.mpich)"
dfs_setup 4
ckf_stage_on_tmpfs
export CKPTFWD_IDLE_EXIT=10
direct=$T/direct
mkdir -p "$direct"

# job NODES PER CMD...: PER ranks on each of nodes 0..NODES-1 run CMD under the library,
# each inside its node's namespace.
job() {
  local nodes=$1 per=$2 i args=()
  shift 2
  for ((i = 0; i < nodes; i++)); do
    ((i > 0)) && args+=(:)
    args+=(-n "$per" -env CKPTFWD_NODE_ID "n$i" "$DFS_ON_NODE" "$i"
      env LD_PRELOAD="$LIB" CKPTFWD_CAPTURE="$CAPTURE" "$@")
  done
  timeout 300 mpiexec.mpich "${args[@]}"
}

# restore_check STORE_DIR_ON_NODE3 EXPECTED_DIR PREFIX: every file of EXPECTED_DIR (relative
# names) restored from the store through node 3's client equals it; the store holds no
# other file.
restore_check() {
  local store=$1 expected=$2 prefix=$3 out f got n=0
  out=$(mktemp -d "$T/restored.XXXXXX")
  timeout 300 "$CLI" restore "$store" --to "$out" >"$T/restore.out" 2>&1 ||
    fail "restore through node 3's client: $(tail -3 "$T/restore.out")"
  while IFS= read -r f; do
    # restore writes the files under OUT by their full path, or by their path below the
    # directory all of them share.
    got=$out$prefix/$f
    [[ -e $got ]] || got=$out/$f
    cmp -s "$expected/$f" "$got" || fail "$prefix/$f restored wrong (or not at all)"
    n=$((n + 1))
  done < <(cd "$expected" && find . -type f -printf '%P\n')
  got=$(find "$out" -type f | wc -l)
  [[ $got -eq $n ]] || fail "the store holds $got files, not $n (unlinked or renamed ones back?)"
  timeout 300 "$CLI" verify "$store" >"$T/verify.out" 2>&1 || fail "verify $store: $(tail -5 "$T/verify.out")"
  RESTORED=$n
}

# Part 1.
CAP=$DFS/shared
CAPTURE="$CAP/*"
mkdir -p "${DFS_MNT[0]}/shared" "$direct/shared"
for mode in header n1 n1sync chain rename replace; do
  mpiexec.mpich -n 4 "$PS" "$mode" "$direct/shared/$mode.dat" >/dev/null || fail "direct $mode failed"
done
# A user watching the store from node 3 while the jobs run (its client then holds the
# MANIFEST's size and pages from a moment ago): right after each job, `ckptfwd ls` there
# must list the job's file. GlusterFS's client answers from that cache for about a second;
# before the store was read with O_DIRECT (src/store/manifest/fresh_read.h) the file was
# missing in most of these looks, and a restore restored older versions.
watch_store() {
  while [[ ! -e $T/watch.stop ]]; do
    stat "${DFS_MNT[3]}/shared/.ckptfwd/MANIFEST" >/dev/null 2>&1
    cat "${DFS_MNT[3]}/shared/.ckptfwd/MANIFEST" >/dev/null 2>&1
    sleep 0.1
  done
}
watch_store &
watcher=$!
late=0
for layout in "2 2" "4 1"; do
  read -r nodes per <<<"$layout"
  export CKPTFWD_JOB_ID=dfsp$nodes-$$
  for mode in header n1 n1sync chain rename replace; do
    job "$nodes" "$per" "$PS" "$mode" "$CAP/$mode-$nodes.dat" >"$T/run.out" 2>&1 ||
      fail "[$mode, $nodes nodes x $per] the job failed: $(grep -m3 -e MISMATCH -e rank "$T/run.out")"
    "$CLI" ls "${DFS_MNT[3]}/shared/.ckptfwd" >"$T/ls.out" 2>&1 || true
    # (listed below where node 3 sees the store: $CAP is the nodes' path to it)
    grep -q -e " $CAP/$mode-$nodes.dat\$" -e " ${DFS_MNT[3]}/shared/$mode-$nodes.dat\$" "$T/ls.out" ||
      late=$((late + 1))
    cp "$direct/shared/$mode.dat" "$direct/shared/$mode-$nodes.dat"
    [[ $mode != replace ]] || cp "$direct/shared/$mode.dat.moved" "$direct/shared/$mode-$nodes.dat.moved"
  done
done
touch "$T/watch.stop"  # (a TERM would run the test's own trap in the watcher)
wait "$watcher" || true
[[ $late -eq 0 ]] || fail "right after $late of 12 jobs, ckptfwd ls on node 3 did not list the job's file"
for mode in header n1 n1sync chain rename replace; do rm "$direct/shared/$mode.dat"; done
rm "$direct/shared/replace.dat.moved"
restore_check "${DFS_MNT[3]}/shared/.ckptfwd" "$direct/shared" "$CAP"
for j in dfsp2-$$ dfsp4-$$; do
  [[ ! -e $CAP/.ckptfwd/.pending-$j ]] || fail "job $j noted its closes in the store's journal: the group answers for them"
done
ok "[GlusterFS] header, N-1, N-1 + fsync, handoffs, temp-and-rename and renames and unlinks of other nodes' files on 2x2 and 4x1 nodes: every rank's read-back and stat and all $RESTORED files on the store exact"

if [[ ${CKF_DFS_FULL:-0} == 1 ]]; then
  FILES=200 STEPS=10 SIZES="2 4"
else
  FILES=50 STEPS=4 SIZES=2
fi
# The small-file job: rank r writes FILES files per step into step<s>/, STEPS steps.
cat >"$T/smallfiles.sh" <<EOS
#!/bin/bash
# smallfiles.sh DIR RANK: $STEPS steps of $FILES files of about 1 KiB.
EOS
cat >>"$T/smallfiles.sh" <<'EOS'
dir=$1 r=$2
for s in $(seq 1 STEPS); do
  mkdir -p "$dir/step$s"
  for f in $(seq 1 FILES); do
    printf "step %d rank %d file %d %0.s" $s $r $f {1..150} >"$dir/step$s/r$r-f$f"
  done
done
echo done
EOS
sed -i "s/seq 1 STEPS/seq 1 $STEPS/; s/seq 1 FILES/seq 1 $FILES/" "$T/smallfiles.sh"
chmod +x "$T/smallfiles.sh"
mkdir -p "$direct/small"
for r in $(seq 0 15); do "$T/smallfiles.sh" "$direct/small" "$r" >/dev/null; done

# small_job NODES TAG [KILL]: the job on NODES nodes x 4 ranks into one store; KILL=1 kills
# each node's forwarder once, at a random moment of the run.
small_job() {
  local nodes=$1 tag=$2 kill=${3:-0} store expected killer=
  CAP=$DFS/$tag
  CAPTURE="$CAP/step*/*"
  export CKPTFWD_JOB_ID=dfs$tag-$$
  mkdir -p "${DFS_MNT[0]}/$tag"
  if [[ $kill -eq 1 ]]; then
    (
      for ((i = 0; i < nodes; i++)); do
        sleep "$((RANDOM % 20 / 10)).$((RANDOM % 10))"
        for p in $(session_forwarders); do
          tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "CKPTFWD_NODE_ID=n$i" &&
            kill -KILL "$p" 2>/dev/null && echo "killed n$i's forwarder $p"
        done
      done
      true  # (the last forwarder looked at may be another node's)
    ) >"$T/killer.out" 2>&1 &
    killer=$!
  fi
  local rc=0
  job "$nodes" 4 bash -c "exec '$T/smallfiles.sh' '$CAP' \$PMI_RANK" >"$T/small.out" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || fail "[$tag] the job failed (exit $rc): $(grep -v '^done$' "$T/small.out" | head -5)"
  [[ -z $killer ]] || wait "$killer" || true
  [[ $(grep -c '^done$' "$T/small.out") -eq $((nodes * 4)) ]] || fail "[$tag] a rank did not finish: $(head -5 "$T/small.out")"
  expected=$T/expected-$tag
  mkdir -p "$expected"
  for s in $(seq 1 "$STEPS"); do
    mkdir -p "$expected/step$s"
    for r in $(seq 0 $((nodes * 4 - 1))); do cp "$direct/small/step$s/r$r-"* "$expected/step$s/"; done
  done
  store=${DFS_MNT[3]}/$tag/.ckptfwd
  restore_check "$store" "$expected" "$CAP"
  # Each path in exactly one record: none lost (restore) and none twice.
  local dup
  dup=$(grep -oE "$CAP/step[0-9]+/r[0-9]+-f[0-9]+" "$store/MANIFEST" | sort | uniq -d | head -3)
  [[ -z $dup ]] || fail "[$tag] paths in more than one record: $dup"
  [[ $kill -eq 0 ]] || grep -q killed "$T/killer.out" || fail "[$tag] no forwarder was killed: the test shows nothing"
  ok "[GlusterFS, $nodes nodes x 4 ranks x $FILES files x $STEPS steps$([[ $kill -eq 1 ]] && echo ", $(grep -c killed "$T/killer.out") forwarders killed")] $RESTORED files exact, each in one record, verify clean, $(ls "$store" | grep -c '\.ckc$') containers"
}
for n in $SIZES; do small_job "$n" "small$n"; done
if [[ ${CKF_DFS_KILLS:-0} == 1 || ${CKF_DFS_FULL:-0} == 1 ]]; then small_job 2 kill2 1; fi
