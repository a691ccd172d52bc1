#!/usr/bin/env bash
# Older versions of a file (docs/cli.md): a checkpoint rewritten in place, one written to
# a temporary name and renamed onto the last, and one deleted keep their older versions
# in the store (CKPTFWD_KEEP=0). `ckptfwd ls --versions` numbers them back from the
# newest (0 live, 1 the one it replaced, ...) with their sizes; `ckptfwd restore
# --version N PATH` gives version N back byte for byte (a relative PATH is below the
# capture directory), also when a newer file was written directly at the path (which a
# plain restore takes instead); a version the store does not hold is named (exit 1); a
# MANIFEST record that is skipped (corrupt) makes the count unreliable: --version refuses.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
H=$(dirname "$0")

# Three versions of each file, each from a process of its own, drained between.
py_write() { # FILE SIZE SEED [rename]: SIZE pseudo-random bytes; with rename, via FILE.tmp
  with_lib /usr/bin/python3 -c '
import os, random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = random.Random(seed).randbytes(size)
target = path + ".tmp" if len(sys.argv) > 4 else path
with open(target, "wb") as f:
    f.write(data)
if target != path:
    os.rename(target, path)
' "$@" || fail "writing $1 (seed $3) under the library exited $?"
  drain
}
for v in 1 2 3; do
  py_write "$CAP/inplace.bin" $((100000 + v * 1000)) $v
  py_write "$CAP/renamed.bin" $((50000 + v * 1000)) $((10 + v)) rename
  py_write "$CAP/gone.bin" $((20000 + v * 1000)) $((20 + v))
done
with_lib rm "$CAP/gone.bin" || fail "rm of gone.bin under the library exited $?"
drain
for v in 1 2 3; do
  /usr/bin/python3 -c 'import random,sys; open(sys.argv[1],"wb").write(random.Random(int(sys.argv[3])).randbytes(int(sys.argv[2])))' \
    "$DIRECT/inplace.$v" $((100000 + v * 1000)) $v
  /usr/bin/python3 -c 'import random,sys; open(sys.argv[1],"wb").write(random.Random(int(sys.argv[3])).randbytes(int(sys.argv[2])))' \
    "$DIRECT/renamed.$v" $((50000 + v * 1000)) $((10 + v))
  /usr/bin/python3 -c 'import random,sys; open(sys.argv[1],"wb").write(random.Random(int(sys.argv[3])).randbytes(int(sys.argv[2])))' \
    "$DIRECT/gone.$v" $((20000 + v * 1000)) $((20 + v))
done

"$CLI" ls "$STORE" --versions inplace.bin renamed.bin gone.bin >"$T/versions.out" 2>"$T/versions.err" ||
  fail "ls --versions exited $?: $(cat "$T/versions.err")"
/usr/bin/python3 - "$T/versions.out" "$CAP" <<'PY' || fail "ls --versions does not list the versions (above): $(cat "$T/versions.out")"
import re, sys
text, cap = open(sys.argv[1]).read(), sys.argv[2]
blocks = {}
for line in text.splitlines():
    if not line.startswith(" "):
        cur = line.split("  ")[0]
        blocks[cur] = (line.endswith("(deleted)"), [])
    else:
        m = re.match(r"\s+(\d+)(?: live)?\s+(\d+)\s", line)
        blocks[cur][1].append((int(m.group(1)), int(m.group(2))))
want = {"inplace.bin": (False, [(0, 103000), (1, 102000), (2, 101000)]),
        "renamed.bin": (False, [(0, 53000), (1, 52000), (2, 51000)]),
        "gone.bin": (True, [(1, 23000), (2, 22000), (3, 21000)])}
for name, w in want.items():
    got = blocks.get(cap + "/" + name)
    if got != w:
        print(f"{name}: listed {got}, expected {w}")
        sys.exit(1)
PY
ok "ls --versions: 3 versions of a rewritten, a renamed-onto and a deleted file, numbered back from the newest"

restore_version() { # N PATH OUTDIR
  timeout 60 "$CLI" restore "$STORE" --to "$3" --version "$1" "$2" >"$T/rv.out" 2>&1 ||
    fail "restore --version $1 $2 exited $?: $(cat "$T/rv.out")"
}
for n in 1 2; do
  restore_version $n inplace.bin "$T/in$n"
  assert_same_bytes "$DIRECT/inplace.$((3 - n))" "$T/in$n/inplace.bin" "inplace.bin version $n"
  restore_version $n renamed.bin "$T/re$n"
  assert_same_bytes "$DIRECT/renamed.$((3 - n))" "$T/re$n/renamed.bin" "renamed.bin version $n"
done
restore_version 1 "$CAP/gone.bin" "$T/gone1"
assert_same_bytes "$DIRECT/gone.3" "$T/gone1/gone.bin" "the deleted gone.bin's last version"
restore_version 3 gone.bin "$T/gone3"
assert_same_bytes "$DIRECT/gone.1" "$T/gone3/gone.bin" "gone.bin version 3"
ok "restore --version N gives each version back byte for byte, the deleted file's too"

# A newer direct write at the path: a plain restore takes it, --version the store's bytes.
cp "$DIRECT/inplace.1" "$T/newer" && touch -d '+1 minute' "$T/newer"
cp -p "$T/newer" "$CAP/inplace.bin"
timeout 60 "$CLI" restore "$STORE" --to "$T/plain" inplace.bin >"$T/plain.out" 2>&1 || fail "plain restore exited $?"
assert_same_bytes "$T/newer" "$T/plain/inplace.bin" "the plain restore (newest wins)"
restore_version 1 inplace.bin "$T/v1again"
assert_same_bytes "$DIRECT/inplace.2" "$T/v1again/inplace.bin" "version 1 despite a newer direct write"
rm -f "$CAP/inplace.bin"

rc=0
"$CLI" restore "$STORE" --to "$T/none" --version 3 inplace.bin >"$T/none.out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "restore --version 3 of a file with versions 0..2 exited $rc, not 1"
grep -q "has no version 3" "$T/none.out" || fail "restore --version 3 does not say so: $(cat "$T/none.out")"
"$CLI" ls "$STORE" --versions --json >"$T/versions.json" || fail "ls --versions --json exited $?"
/usr/bin/python3 "$H/json_doc_check.py" "$CKF_REPO/docs/json.md" "ckptfwd ls STORE --versions --json" "$T/versions.json" ||
  fail "ls --versions --json differs from docs/json.md (above)"
ok "a version the store does not hold is named (exit 1); --json is as documented"

# A corrupt record of inplace.bin (one byte of its path changed, so its checksum fails):
# the versions after it would be counted wrong, so restore --version refuses, ls warns.
cp "$STORE/MANIFEST" "$T/MANIFEST.good"
line=$(grep -n "inplace.bin" "$STORE/MANIFEST" | sed -n 2p | cut -d: -f1)
[[ -n $line ]] || fail "no second record of inplace.bin in the MANIFEST"
sed -i "${line}s/inplace.bin/inplace.bim/" "$STORE/MANIFEST"
rc=0
"$CLI" restore "$STORE" --to "$T/bad" --version 1 inplace.bin >"$T/bad.out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "restore --version with a corrupt record of the file exited $rc: $(cat "$T/bad.out")"
grep -q "cannot be counted back" "$T/bad.out" || fail "restore --version does not say why: $(cat "$T/bad.out")"
[[ ! -e $T/bad/inplace.bin ]] || fail "restore --version restored a version counted across a skipped record"
# (into a file: grep -q quitting at the warning would kill the listing after it with
# SIGPIPE, which pipefail turns into a failure)
"$CLI" ls "$STORE" --versions inplace.bin >"$T/warned.out" 2>&1 || fail "ls --versions exited $?: $(cat "$T/warned.out")"
grep -q "versions may be missing" "$T/warned.out" ||
  fail "ls --versions does not warn that versions may be missing: $(cat "$T/warned.out")"
cp "$T/MANIFEST.good" "$STORE/MANIFEST"
ok "a skipped record of the file: restore --version refuses, ls --versions warns"

