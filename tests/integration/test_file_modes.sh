#!/usr/bin/env bash
# Permission bits (and, for tar, modification times) of captured files, compared with the direct run through the library
# (stat) and in `ckptfwd restore` (which restores "with their permission bits"):
#   explicit open() modes 0600/0640; a umask set before the process starts (027) and one
#   changed inside the process after the library initialised (077, as shells do with
#   `umask 077; cmd > file`); tar -x, which creates its files 0600 and fchmod()s them to the
#   archive's modes (0644, 0755); chmod(1) on a closed captured file.
# All cases are run and every mismatch is listed before the test fails, so one gap does not
# hide the others. Note: chmod/fchmod were not among the first wrapped calls; the cases
# that need them are here because real tools (tar, cp -p, rsync) depend on them.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

DIRECT=$T/direct
CAP=$T/ckpt
OUT=$T/restored
STORE=$CAP/.ckptfwd
mkdir -p "$DIRECT" "$CAP" "$OUT" "$T/tarsrc"
CAPTURE="$CAP/*"

printf 'data\n' >"$T/tarsrc/tar644.txt" && chmod 644 "$T/tarsrc/tar644.txt"
printf '#!/bin/sh\necho hi\n' >"$T/tarsrc/tar755.sh" && chmod 755 "$T/tarsrc/tar755.sh"
touch -d @1000000000 "$T/tarsrc/tar644.txt" "$T/tarsrc/tar755.sh"   # tar -x restores mtimes
tar -C "$T/tarsrc" -cf "$T/in.tar" tar644.txt tar755.sh

PY='import os, sys
d = sys.argv[1]
def create(name, mode):
    fd = os.open(os.path.join(d, name), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, mode)
    os.write(fd, name.encode())
    os.close(fd)
create("open600", 0o600)
create("open640", 0o640)
os.umask(0o077)
create("umask077_inside", 0o666)'
CASES='umask 022; /usr/bin/python3 -c "$PY" "$D"
umask 027; /usr/bin/python3 -c "open(\"$D/umask027_before\", \"w\").write(\"x\")"
tar -C "$D" -xf "$TAR"
printf x > "$D/chmod600"; chmod 600 "$D/chmod600"'

problems=()
while IFS= read -r case; do
  D=$DIRECT PY=$PY TAR=$T/in.tar bash -c "$case" || fail "without the library: '$case' failed"
  with_lib env D="$CAP" PY="$PY" TAR="$T/in.tar" bash -c "$case" 2>"$T/case.err" ||
    problems+=("'$case' failed under the library: $(tail -1 "$T/case.err")")
done <<<"$CASES"
drain
restore_store "$STORE" "$OUT"

for f in "$DIRECT"/*; do
  name=$(basename "$f")
  want=$(stat -c %a "$f")
  seen=$(with_lib stat -c %a "$CAP/$name" 2>&1)
  r=$(restored_file "$OUT" "$CAP/$name")
  restored=$([[ -n "$r" ]] && stat -c %a "$r" || echo missing)
  echo "$name: direct $want, through the library $seen, restored $restored"
  [[ "$seen" == "$want" ]] || problems+=("$name: stat through the library says $seen, direct run $want")
  [[ "$restored" == "$want" ]] || problems+=("$name: restored with mode $restored, direct run $want")
done
# Modification times set by tar (utimensat) on extracted files.
for name in tar644.txt tar755.sh; do
  want=$(stat -c %Y "$DIRECT/$name")
  seen=$(with_lib stat -c %Y "$CAP/$name" 2>&1)
  r=$(restored_file "$OUT" "$CAP/$name")
  restored=$([[ -n "$r" ]] && stat -c %Y "$r" || echo missing)
  echo "$name: mtime direct $want, through the library $seen, restored $restored"
  [[ "$seen" == "$want" && "$restored" == "$want" ]] ||
    problems+=("$name: mtime through the library $seen, restored $restored, direct run $want")
done
[[ ${#problems[@]} -eq 0 ]] || fail "$(printf '%s; ' "${problems[@]}")"
ok "permission bits match the direct run through the library and in the restore"
