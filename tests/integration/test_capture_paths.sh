#!/usr/bin/env bash
# Which paths are captured, however the application names them: the library rejects an
# uncaptured path before any path work (literal glob prefixes, a copy of the working
# directory kept by wrapping chdir/fchdir), and must capture exactly what the full
# resolution captures. One Python process (its os calls are libc's) writes files named
# absolutely with "//", "." and "..", relatively after chdir and fchdir (also into a
# directory reached through a symbolic link, and in a forked child), and relative to a
# directory fd (openat). Then, without the library: every captured name is absent from the
# disk and every uncaptured one is a regular file there; under the library every file
# reads back its own bytes; `ckptfwd restore` gives the captured ones byte for byte.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"

CAP=$T/ckpt
mkdir -p "$CAP/sub" "$T/other"
ln -s "$CAP" "$T/link"
CAPTURE="$CAP/*.bin"

cat >"$T/writer.py" <<'PY'
import os, sys
T = sys.argv[1]
CAP = T + "/ckpt"
def put(name, dir_fd=None):
    data = ("bytes of " + name + "\n").encode() * 7
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
    os.write(fd, data)
    os.close(fd)
put(CAP + "/abs.bin")
put(T + "//ckpt/./sub/../dotted.bin")
put(CAP + "/abs.txt")                       # not a .bin: not captured
os.chdir(CAP)
put("rel.bin")
put("rel.txt")
put("sub/../relup.bin")
os.chdir(T)
put("ckpt/fromparent.bin")
put("other/elsewhere.bin")                  # outside the glob's directory
d = os.open(CAP, os.O_RDONLY | os.O_DIRECTORY)
os.chdir("/")
os.fchdir(d)
put("fchdir.bin")
put("at.bin", dir_fd=d)
put("at.txt", dir_fd=d)
os.close(d)
os.chdir(T + "/link")                       # getcwd() names the real directory
put("vialink.bin")
put(T + "/link/linkabs.bin")                # a link in an absolute name: not captured
pid = os.fork()
if pid == 0:
    os.chdir(CAP)
    put("child.bin")
    os._exit(0)
_, status = os.waitpid(pid, 0)
sys.exit(0 if status == 0 else 1)
PY

with_lib /usr/bin/python3 "$T/writer.py" "$T" >"$T/write.out" 2>&1 ||
  fail "writer under the library failed: $(tail -5 "$T/write.out")"

captured="abs dotted rel relup fromparent fchdir at vialink child"
for n in $captured; do
  [[ ! -e "$CAP/$n.bin" ]] || fail "$CAP/$n.bin is on disk: it was not captured"
done
for f in "$CAP/abs.txt" "$CAP/rel.txt" "$CAP/at.txt" "$T/other/elsewhere.bin" "$CAP/linkabs.bin"; do
  [[ -f "$f" ]] || fail "$f is not on disk: an uncaptured path was captured"
done
ok "captured exactly the names the glob resolves to (absolute, relative, chdir, fchdir, openat, fork)"

cat >"$T/reader.py" <<'PY'
import os, sys
CAP = sys.argv[1]
bad = []
for name in sys.argv[2:]:
    want = ("bytes of " + name.split("/")[-1] + "\n").encode() * 7
    path = name if name.startswith("/") else CAP + "/" + name
    try:
        got = open(path, "rb").read()
    except OSError as e:
        bad.append(f"{path}: {e}")
        continue
    # put() was given the name as the writer spelled it: compare the content's pattern only
    if not got.startswith(b"bytes of ") or len(got) != len(got.splitlines()[0] + b"\n") * 7:
        bad.append(f"{path}: unexpected content {got[:40]!r}")
if bad:
    sys.exit("\n".join(bad))
PY
names=""
for n in $captured; do names="$names $n.bin"; done
os_dir_names="abs.txt rel.txt at.txt"
(cd "$T/other" && with_lib /usr/bin/python3 "$T/reader.py" "$CAP" $names $os_dir_names) >"$T/read.out" 2>&1 ||
  fail "read-back under the library failed: $(tail -5 "$T/read.out")"
ok "every file reads back under the library"

drain
OUT=$T/restored
restore_store "$CAP/.ckptfwd" "$OUT"
n_out=$(find "$OUT" -type f | wc -l)
[[ $n_out -eq 9 ]] || fail "restore gave $n_out files, want 9: $(find "$OUT" -type f | tr '\n' ' ')"
for n in $captured; do
  r=$(restored_file "$OUT" "$CAP/$n.bin")
  [[ -n "$r" ]] || fail "restore did not give $CAP/$n.bin"
  grep -q "^bytes of " "$r" || fail "$r: unexpected content"
done
ok "restore gives the 9 captured files"
