#!/bin/bash
# Lists the functions of src/ and tools/ckptfwd/ that nothing of the product calls.
# usage: tools/dev/dead_functions.sh [BUILD_DIR]   (default: build; it must be built)
#
# From the object files of the product (BUILD_DIR/src and BUILD_DIR/tools, not tests/):
# every global function an object defines (nm: T or W) is used when some object of the
# product names it in a relocation (a call, an address taken) or as undefined. The ones
# left are printed with the number of times their unqualified name occurs in the product's
# sources and in the tests: a function the compiler inlined at every call site in its own
# file has no relocation left, so a count above 2 (declaration and definition) is a call
# to read, not a dead function; one the tests alone name is a seam they test through.
# Exit 1 when one is named nowhere but where it is declared and defined. Left out: main,
# the exported C entry points of the preload libraries (the application calls them), the
# generated real-call table and what is not in namespace ckptfwd.
# Static functions are -Wunused-function's; member functions defined in a class body
# are not seen (they are emitted only where used).
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$build/src" ] || { echo "dead_functions: $build/src: no build there" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Objects whose source file is still there (a build directory keeps the objects of
# sources since removed): BUILD/<dir>/CMakeFiles/<target>.dir/<path>.cc.o <- <dir>/<path>.cc.
find "$build/src" "$build/tools" -name '*.o' -not -path '*/test/*' -not -path '*_tests.dir/*' \
  -not -path '*/bench/*' | sort | while IFS= read -r o; do
  rel=${o#"$build"/}
  src=$(echo "$rel" | sed -E 's#CMakeFiles/[^/]+\.dir/##; s#\.o$##')
  [ -e "$root/$src" ] && echo "$o"
done >"$tmp/objs"
[ -s "$tmp/objs" ] || { echo "dead_functions: no object files under $build" >&2; exit 2; }

xargs -a "$tmp/objs" nm --defined-only -g 2>/dev/null | awk '$2 ~ /^[TW]$/ {print $3}' \
  | sort -u >"$tmp/defined"
{
  xargs -a "$tmp/objs" nm -u 2>/dev/null | awk '{print $NF}'
  xargs -a "$tmp/objs" readelf -rW 2>/dev/null \
    | awk 'NF >= 5 && $1 ~ /^[0-9a-f]+$/ {s = $5; sub(/@.*/, "", s); sub(/\+.*/, "", s); print s}'
} | sort -u >"$tmp/used"

# A constructor or destructor is emitted as several aliases (C1/C2, D0/D1/D2) of which a
# caller names one: compare them with the variant folded.
fold() { sed -E 's/(C[123]|D[012])(E|I)/CDX\2/g' "$1"; }
fold "$tmp/defined" | paste - "$tmp/defined" | sort -u >"$tmp/defined.folded"
fold "$tmp/used" | sort -u >"$tmp/used.folded"
# Only ours (_ZN7ckptfwd...): C-linkage names are the preload libraries' entry points, and
# the library templates instantiated in our objects are not ours to remove.
awk 'NR == FNR {used[$1] = 1; next} !($1 in used) {print $2}' "$tmp/used.folded" \
  "$tmp/defined.folded" | grep -E '^_ZN[KL]?7ckptfwd' | sort -u >"$tmp/dead"

# Each is printed as "<src> <tests> <name>": how many times its unqualified name occurs in
# src/ and tools/ckptfwd/ (test/ excluded), and in how many files of tests/,
# tools/ckptfwd/test/ and tools/bench/.
while IFS= read -r sym; do
  name=$(echo "$sym" | c++filt)
  case $name in
    ckptfwd::interpose::real::*) continue ;; # generated from real_calls.def, one per wrapper
  esac
  short=${name%%(*}
  short=${short##*::}
  short=${short%%<*}
  [ -n "$short" ] || continue
  src=$(grep -rwo --include='*.h' --include='*.cc' "$short" "$root/src" "$root/tools/ckptfwd" \
    --exclude-dir=test | wc -l)
  tests=$(grep -rlw --include='*.h' --include='*.cc' "$short" "$root/tests" \
    "$root/tools/ckptfwd/test" "$root/tools/bench" | wc -l)
  printf '%4d %4d  %s\n' "$src" "$tests" "$name"
done <"$tmp/dead" | sort -n -k1 -k2 | uniq >"$tmp/out"
echo "  src tests function"
cat "$tmp/out"
dead=$(awk '$1 <= 2 && $2 == 0' "$tmp/out" | wc -l)
echo "dead_functions: $dead dead (named only where declared and defined)," \
  "$(awk '$1 <= 2 && $2 > 0' "$tmp/out" | wc -l) called only by tests," \
  "$(awk '$1 > 2' "$tmp/out" | wc -l) named elsewhere in the product (calls inlined: read them)"
[ "$dead" -eq 0 ]
