#!/usr/bin/env bash
# Shell tools over existing captured files, each command its own process as in a job
# script: cp onto a captured file that exists (coreutils 9 asks with an
# O_PATH|O_DIRECTORY open whether the destination is a directory, and takes ENOENT for
# "does not exist", then creates it with O_EXCL), cp into the directory, mv over an
# existing file, `test -d`/`test -f`, an O_PATH open followed by fstat, opendir, realpath() and
# readlink() (`realpath -e`, `readlink -e`; glibc's realpath resolves with an internal
# readlink the library cannot see). The bytes, as
# read back through the library and restored from the store, must be those of the same
# commands without the library.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs

head -c 30000 /dev/urandom >"$T/v1"
head -c 50000 /dev/urandom >"$T/v2"
head -c 7000 /dev/urandom >"$T/v3"
script='
  set -e
  cp "$T/v1" "$D/ckpt.bin"
  cp "$T/v2" "$D/ckpt.bin"
  cp "$T/v3" "$D/"
  cp "$T/v1" "$D/next.bin"
  mv "$D/next.bin" "$D/v3"
  cp "$T/v2" "$D/ckpt.bin"
'
T=$T D=$DIRECT bash -c "$script" || fail "the commands fail without the library"
with_lib env T="$T" D="$CAP" bash -c "$script" 2>"$T/err" ||
  fail "the commands fail under the library: $(tail -5 "$T/err")"
ok "cp onto existing captured files, cp into the directory, mv over a captured file"

for f in ckpt.bin v3; do
  with_lib cat "$CAP/$f" >"$T/read.$f" || fail "cat $CAP/$f under the library failed"
  assert_same_bytes "$DIRECT/$f" "$T/read.$f" "$f read through the library"
done
with_lib bash -c "[ -f '$CAP/ckpt.bin' ] && ! [ -d '$CAP/ckpt.bin' ]" ||
  fail "test -f / test -d under the library do not see $CAP/ckpt.bin as a regular file"
size=$(with_lib /usr/bin/python3 -c "
import os, sys
fd = os.open(sys.argv[1], os.O_PATH)
print(os.fstat(fd).st_size)" "$CAP/ckpt.bin") || fail "an O_PATH open of a captured file failed"
[[ $size == 50000 ]] || fail "fstat of an O_PATH fd of $CAP/ckpt.bin says size $size, want 50000"
got=$(with_lib /usr/bin/python3 -c "
import os, sys
try:
    os.listdir(sys.argv[1])
except OSError as e:
    print(e.strerror)" "$CAP/ckpt.bin")
[[ $got == "$(/usr/bin/python3 -c 'import os,errno; print(os.strerror(errno.ENOTDIR))')" ]] ||
  fail "opendir of a captured file says '$got', want ENOTDIR"
# Hard links are not supported: a clear refusal (EPERM and a log line), not ENOENT.
with_lib ln "$CAP/ckpt.bin" "$T/hard" 2>"$T/ln.err" && fail "ln of a captured file succeeded?"
grep -q "Operation not permitted" "$T/ln.err" || fail "ln of a captured file: $(cat "$T/ln.err"), want EPERM"
grep -q "cannot hard-link captured file $CAP/ckpt.bin" "$CKPTFWD_LOG" ||
  fail "no log line names the hard-linked file: $(tail -3 "$CKPTFWD_LOG")"
for cmd in "realpath -e" "readlink -e"; do
  got=$(with_lib $cmd "$CAP/../ckpt/ckpt.bin" 2>&1) || fail "$cmd of a captured file under the library failed: $got"
  [[ $got == "$CAP/ckpt.bin" ]] || fail "$cmd says '$got', want $CAP/ckpt.bin"
done
got=$(with_lib /usr/bin/python3 -c "
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.realpath.restype = ctypes.c_char_p
libc.readlink.restype = ctypes.c_ssize_t
buf = ctypes.create_string_buffer(4096)
n = libc.readlink(sys.argv[1].encode(), buf, 4096)
err = os.strerror(ctypes.get_errno())
print(libc.realpath(sys.argv[1].encode(), None).decode(), n, err)" "$CAP/./ckpt.bin") ||
  fail "realpath()/readlink() through ctypes failed: $got"
[[ $got == "$CAP/ckpt.bin -1 $(/usr/bin/python3 -c 'import os,errno; print(os.strerror(errno.EINVAL))')" ]] ||
  fail "realpath() and readlink() of a captured file say '$got', want its name and EINVAL (not a link)"
ok "read back, test -f/-d, O_PATH+fstat, realpath and readlink see the captured files"

drain
restore_store "$STORE" "$OUT"
assert_restored_tree "$DIRECT" "$CAP" "$OUT"
ok "restore gives the direct run's files"

# A symbolic link whose name is captured (`latest -> ckpt.bin`, made with the real
# symlink call) leads to the captured file: read, stat -L and realpath follow it; readlink,
# lstat, lchmod, faccessat(AT_SYMLINK_NOFOLLOW) and an O_PATH|O_NOFOLLOW open see the
# link; an atomic swap (ln -s; mv -T)
# re-points it, rm removes only it.
links='
  set -e
  cd "$D"
  ln -s ckpt.bin latest
  cat latest >"$T/$1.latest1"
  stat -L -c %s latest >"$T/$1.size"
  readlink latest >"$T/$1.readlink"
  realpath -e latest | sed "s|^$D/||" >"$T/$1.realpath"
  [ -L latest ] && [ -f latest ]
  /usr/bin/python3 -c "import os, stat; fd = os.open(\"latest\", os.O_PATH | os.O_NOFOLLOW); print(stat.S_ISLNK(os.fstat(fd).st_mode))" >"$T/$1.opath_nofollow"
  /usr/bin/python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.lchmod(b\"latest\", 0o600)
print(rc, os.strerror(ctypes.get_errno()) if rc else \"\", oct(os.stat(\"ckpt.bin\").st_mode & 0o777))" >"$T/$1.lchmod"
  chmod 0 ckpt.bin
  /usr/bin/python3 -c "import os; print(os.access(\"latest\", os.W_OK, follow_symlinks=False))" >"$T/$1.access"
  chmod 644 ckpt.bin
  ln -s v3 latest.tmp && mv -T latest.tmp latest
  cat latest >"$T/$1.latest2"
  rm latest
  [ ! -e latest ] && [ -f ckpt.bin ]
'
T=$T D=$DIRECT bash -c "$links" _ direct || fail "the symlink commands fail without the library"
with_lib env T="$T" D="$CAP" bash -c "$links" _ lib 2>"$T/err" ||
  fail "the symlink commands fail under the library: $(tail -5 "$T/err")"
for f in latest1 size readlink realpath opath_nofollow lchmod access latest2; do
  assert_same_bytes "$T/direct.$f" "$T/lib.$f" "through the link: $f"
done
ok "a captured symlink: read, stat -L, readlink, realpath, swap and rm as without the library"
