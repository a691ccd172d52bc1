# shellcheck shell=bash
# A real distributed file system for the tests of several simulated nodes (sourced after
# lib.sh and ckf_init): a GlusterFS volume on this machine, with the volume's default
# options, and one FUSE client mount per simulated node. Each node's processes run in a
# mount namespace of their own where the same path, $DFS, is that node's client: what one
# node's client caches (attributes, directory entries, written pages) is not what
# another's sees until GlusterFS says so, as on a cluster. A forwarder a rank starts
# inherits its node's namespace, so it commits through that node's client too.
#
#   dfs_setup N           N client mounts (nodes 0..N-1); sets DFS (the path every node
#                         sees its client at) and DFS_MNT[i] (node i's client, outside the
#                         namespaces: for the checks). Skips without root, /dev/fuse,
#                         unshare or the GlusterFS server and client.
#   "$DFS_ON_NODE" I CMD...  runs CMD with $DFS bound to node I's client (it execs CMD:
#                         the exit status and signals are CMD's); a program, so it can be
#                         mpiexec's command for that node's ranks. The library goes after
#                         it (CMD = env LD_PRELOAD=... PROG), not before: a process under
#                         the library outside the namespace (mpiexec, its proxy, this
#                         launcher) may start the node's forwarder (an MPI rank's early
#                         start), which would then see the host's empty $DFS.
#   dfs_teardown          unmounts and deletes the volume (registered with ckf_cleanup).

# dfs_setup N
dfs_setup() {
  local n=$1 i host
  [[ $(id -u) -eq 0 ]] || skip "the GlusterFS set-up needs root (mounts, glusterd)"
  [[ -c /dev/fuse ]] || skip "no /dev/fuse: FUSE mounts are not possible here"
  need_cmd glusterd gluster mount.glusterfs unshare
  unshare -m true 2>/dev/null || skip "no mount namespaces here (unshare -m refused)"
  DFS_GLUSTERD_PID=
  if ! gluster --mode=script volume list >/dev/null 2>&1; then
    # Started for this test, stopped by dfs_teardown.
    mkdir -p /var/log/glusterfs
    glusterd --log-level=WARNING --pid-file="$T/glusterd.pid" || fail "glusterd did not start"
    wait_for 'gluster --mode=script volume list >/dev/null 2>&1' 30 || fail "glusterd does not answer"
    DFS_GLUSTERD_PID=$(cat "$T/glusterd.pid" 2>/dev/null)
  fi
  host=$(hostname)
  # GlusterFS names bricks by host and refuses localhost: the host name must resolve here.
  getent hosts "$host" >/dev/null || skip "the host name $host does not resolve (GlusterFS needs it)"
  DFS_VOLUME=ckf-${CKPTFWD_JOB_ID//[^A-Za-z0-9]/-}
  DFS_BRICK=$T/brick
  DFS=$T/dfs
  mkdir -p "$DFS" "$DFS_BRICK"
  CKF_CLEANUP_HOOKS+=(dfs_teardown)
  # force: the brick is on the root file system, which GlusterFS refuses by default.
  gluster --mode=script volume create "$DFS_VOLUME" "$host:$DFS_BRICK/b" force >"$T/dfs.log" 2>&1 ||
    fail "gluster volume create: $(cat "$T/dfs.log")"
  gluster --mode=script volume start "$DFS_VOLUME" >>"$T/dfs.log" 2>&1 ||
    fail "gluster volume start: $(cat "$T/dfs.log")"
  DFS_MNT=()
  for ((i = 0; i < n; i++)); do
    DFS_MNT[i]=$T/mnt/node$i
    mkdir -p "${DFS_MNT[i]}"
    if ! mount -t glusterfs "$host:/$DFS_VOLUME" "${DFS_MNT[i]}" >>"$T/dfs.log" 2>&1; then
      grep -qi "permission denied\|not permitted" "$T/dfs.log" &&
        skip "FUSE mounts are not permitted here: $(tail -1 "$T/dfs.log")"
      fail "mount of $DFS_VOLUME for node $i: $(tail -3 "$T/dfs.log")"
    fi
  done
  DFS_ON_NODE=$T/on_node
  # The launcher a job script's mpiexec runs per node: on_node I CMD... as a program.
  cat >"$DFS_ON_NODE" <<EOF
#!/bin/bash
i=\$1; shift
exec unshare -m --propagation private bash -c 'mount --bind "\$0" "$DFS" && exec "\$@"' \\
  "$T/mnt/node\$i" "\$@"
EOF
  chmod +x "$DFS_ON_NODE"
  echo "dfs: volume $DFS_VOLUME (brick $DFS_BRICK), $n client mounts, seen at $DFS"
}

dfs_teardown() {
  local m
  for m in "${DFS_MNT[@]}"; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  gluster --mode=script volume stop "$DFS_VOLUME" force >/dev/null 2>&1
  gluster --mode=script volume delete "$DFS_VOLUME" >/dev/null 2>&1
  [[ -n ${DFS_GLUSTERD_PID:-} ]] && kill "$DFS_GLUSTERD_PID" 2>/dev/null
  return 0
}
