#!/usr/bin/env bash
# A site installs without root (docs/install.md, "Install at a site"): `cmake --install BUILD
# --prefix P --strip` by a user who owns P and nothing else (nobody, when this runs as root
# and the build is readable to it), then, from the installed tree only (PATH = P/bin, LD_PRELOAD =
# P/lib/libckptfwd.so, no build directory anywhere in the environment): a captured job
# under mpiexec (two checkpoint steps), `ckptfwd ls`, `ls --steps`, `restore --latest`
# byte-exact and `report` (with its page when matplotlib is there), `--version` of both
# programs; the helpers in libexec/ckptfwd and not in bin/, the man pages (man -l reads
# them), the docs, examples and module files in share/.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
need_cmd mpiexec.mpich
# The user: nobody when we are root and it can read the build, else ourselves.
as=()
if [[ $(id -u) -eq 0 ]] && setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$BUILD/install_manifest.txt" -o -r "$BUILD/cmake_install.cmake" 2>/dev/null; then
  as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
W=$(mktemp -d /tmp/ckptfwd-install.XXXXXX)
cleanup_install() {
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/exe" 2>/dev/null) == "$P/bin/ckptfwd-forwarder" ]] && kill -TERM "${p#/proc/}" 2>/dev/null
  done
  sleep 0.5
  rm -rf "$W" /dev/shm/ckptfwd-*-it-install-$$-* 2>/dev/null || true
}
CKF_CLEANUP_HOOKS+=(cleanup_install)
chmod 755 "$W"
P=$W/prefix
mkdir -p "$P" "$W/run/ckpt" "$W/direct" "$W/out"
[[ ${#as[@]} -gt 0 ]] && chown -R 65534:65534 "$W"
who=$([[ ${#as[@]} -gt 0 ]] && echo nobody || id -un)
# `cmake --install BUILD` writes BUILD/install_manifest.txt: as a user who owns the build
# (a site's), that command; as nobody on our root-owned build, the same install rules
# (tools/install/CMakeLists.txt holds them all) run without the manifest.
if [[ ${#as[@]} -eq 0 ]]; then
  cmake --install "$BUILD" --prefix "$P" --strip >"$T/install.out" 2>&1 ||
    fail "cmake --install as $who failed: $(tail -5 "$T/install.out")"
else
  "${as[@]}" cmake -DCMAKE_INSTALL_PREFIX="$P" -DCMAKE_INSTALL_DO_STRIP=1 \
    -P "$BUILD/tools/install/cmake_install.cmake" >"$T/install.out" 2>&1 ||
    fail "the install rules as $who failed: $(tail -5 "$T/install.out")"
fi
grep -v "^-- Install configuration\|^-- Installing: $P\|^-- Up-to-date: $P" "$T/install.out" | grep -q . &&
  fail "the install wrote outside $P: $(grep -v "$P" "$T/install.out" | head -3)"
for f in bin/ckptfwd bin/ckptfwd-forwarder lib/libckptfwd.so libexec/ckptfwd/ckptfwd-launch \
  libexec/ckptfwd/ckptfwd-report-html \
  share/man/man1/ckptfwd.1 share/man/man1/ckptfwd-restore.1 share/man/man8/ckptfwd-forwarder.8 \
  share/man/man7/ckptfwd-settings.7 share/doc/ckptfwd/README.md share/doc/ckptfwd/LICENSE \
  share/doc/ckptfwd/CHANGELOG.md share/doc/ckptfwd/docs/json.md share/ckptfwd/examples/job_slurm.sh; do
  [[ -e $P/$f ]] || fail "$f is not installed: $(cd "$P" && find . | sort | head -40)"
done
[[ -e $P/bin/ckptfwd-h5infer || -e $P/bin/ckptfwd-launch ]] && fail "a helper is in bin/: $(ls "$P/bin")"
# A build with debug info installs it apart: stripped files that name their .debug file.
if grep -q "^CKPTFWD_SPLIT_DEBUG:BOOL=ON" "$BUILD/CMakeCache.txt"; then
  for f in bin/ckptfwd bin/ckptfwd-forwarder lib/libckptfwd.so libexec/ckptfwd/ckptfwd-launch; do
    d=$(dirname "$P/$f")/.debug/$(basename "$f").debug
    [[ -s $d ]] || fail "$f: no debug info file $d"
    # Each listing is read whole before it is searched: under pipefail, `readelf | grep -q`
    # fails when grep has its match and leaves before readelf's last write (SIGPIPE).
    sections=$(readelf -S "$P/$f") || fail "readelf cannot read $P/$f"
    grep -q "\.debug_info" <<<"$sections" && fail "$f is installed with its debug info"
    sections=$(readelf -S "$d") || fail "readelf cannot read $d"
    grep -q "\.debug_info" <<<"$sections" || fail "$d holds no debug info"
    link=$(readelf -p .gnu_debuglink "$P/$f" 2>/dev/null) || true
    grep -q "$(basename "$f").debug" <<<"$link" ||
      fail "$f does not name $(basename "$f").debug in its .gnu_debuglink"
  done
  ok "debug info installed apart: .debug/<name>.debug beside each stripped file, linked"
fi
if [[ -e $BUILD/bin/ckptfwd-h5infer ]]; then
  [[ -x $P/libexec/ckptfwd/ckptfwd-h5infer ]] || fail "ckptfwd-h5infer is not in libexec/ckptfwd"
fi
version=$(sed -n 's/^project(ckptfwd VERSION \([0-9.]*\).*/\1/p' "$CKF_REPO/CMakeLists.txt")
lua=$P/share/ckptfwd/modulefiles/ckptfwd/$version.lua
grep -q "local root = \"$P\"" "$lua" || fail "the Lmod module does not name the prefix: $(cat "$lua")"
grep -q "set root \"$P\"" "$P/share/ckptfwd/modulefiles-tcl/ckptfwd/$version" || fail "the Tcl module does not name the prefix"
nm "$P/bin/ckptfwd-forwarder" 2>&1 | grep -q "no symbols" || fail "the installed forwarder is not stripped"
if command -v man >/dev/null; then
  man -l "$P/share/man/man1/ckptfwd.1" 2>/dev/null | grep -q "restore STORE --to DIR" || fail "man ckptfwd does not show the help text"
  man -l "$P/share/man/man7/ckptfwd-settings.7" 2>/dev/null | grep -q "CKPTFWD_CAPTURE" || fail "the settings page lacks CKPTFWD_CAPTURE"
fi

# The installed tree alone, as that user: a clean environment with nothing of the build.
run() {
  env -i HOME="$W" PATH="$P/bin:/usr/bin:/bin" CKPTFWD_JOB_ID="it-install-$$" \
    CKPTFWD_STAGE_DIR=/dev/shm CKPTFWD_IDLE_EXIT=1 "$@"
}
out=$(run "${as[@]}" ckptfwd --version) || fail "ckptfwd --version failed"
[[ $out == "ckptfwd $version" ]] || fail "ckptfwd --version says '$out', not 'ckptfwd $version'"
out=$(run "${as[@]}" ckptfwd-forwarder --version) || fail "ckptfwd-forwarder --version failed"
[[ $out == "ckptfwd-forwarder $version" ]] || fail "ckptfwd-forwarder --version says '$out'"
for r in 0 1; do "$WRITER" big "$W/direct/r.$r" 2M --rank $r; done
cp "$WRITER" "$W/writer" && chmod 755 "$W/writer"
# Two checkpoint steps of two ranks: step_1/r.<rank>, step_2/r.<rank>.
run "${as[@]}" mpiexec.mpich -n 2 env LD_PRELOAD="$P/lib/libckptfwd.so" CKPTFWD_CAPTURE="$W/run/ckpt/*" \
  sh -c 'for s in 1 2; do mkdir -p "$1/step_$s" && "$0" big "$1/step_$s/r.$PMI_RANK" 2M --rank "$PMI_RANK" || exit 1; done' \
  "$W/writer" "$W/run/ckpt" >"$T/job.out" 2>&1 ||
  fail "the captured job from the installed tree failed: $(tail -5 "$T/job.out")"
[[ -e $W/run/ckpt/step_1/r.0 ]] && fail "the job's files were written directly, not captured: $(cat "$T/job.out")"
run "${as[@]}" ckptfwd ls "$W/run/ckpt/.ckptfwd" >"$T/ls.out" 2>&1 || fail "installed ckptfwd ls failed: $(cat "$T/ls.out")"
grep -q "total: 4 files" "$T/ls.out" || fail "ls does not list the job's 4 files: $(cat "$T/ls.out")"
run "${as[@]}" ckptfwd ls --steps "$W/run/ckpt/.ckptfwd" >"$T/steps.out" 2>&1 ||
  fail "installed ckptfwd ls --steps failed: $(cat "$T/steps.out")"
grep -q "^\* 2 .* complete" "$T/steps.out" && grep -q "^  1 .* complete" "$T/steps.out" ||
  fail "ls --steps does not show steps 1 and 2 complete, 2 the latest: $(cat "$T/steps.out")"
run "${as[@]}" ckptfwd restore "$W/run/ckpt/.ckptfwd" --latest --to "$W/out" >"$T/restore.out" 2>&1 ||
  fail "installed ckptfwd restore --latest failed: $(cat "$T/restore.out")"
for r in 0 1; do assert_same_bytes "$W/direct/r.$r" "$W/out/step_2/r.$r" "rank $r of the latest step restored"; done
[[ $(find "$W/out" -type f | wc -l) -eq 2 ]] || fail "restore --latest restored more than step 2: $(find "$W/out" -type f)"
run "${as[@]}" ckptfwd report "$W/run/ckpt/.ckptfwd" >"$T/report.out" 2>&1 || fail "installed ckptfwd report failed: $(cat "$T/report.out")"
grep -q "^\* 2 " "$T/report.out" || fail "the report does not show step 2 as the latest: $(cat "$T/report.out")"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  run "${as[@]}" ckptfwd report "$W/run/ckpt/.ckptfwd" --html "$W/report.html" >"$T/html.out" 2>&1 ||
    fail "installed ckptfwd report --html failed: $(cat "$T/html.out")"
  grep -q 'id="plot-ratio"><svg' "$W/report.html" || fail "the installed report's page has no plot"
fi
ok "installed by $who into $P: a captured job, ls, ls --steps, a byte-exact restore --latest and report (--html) from the installed tree only"
