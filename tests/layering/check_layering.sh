#!/bin/bash
# Checks every #include "..." of src/ and tools/ckptfwd/ against the arrows of src/layers.txt
# and names each include that runs against them (file:line, what it includes, what its
# folder may include). Exit 0 when none does, 1 otherwise, 2 on a bad table.
# usage: tests/layering/check_layering.sh [SOURCE_DIR]
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
table=$root/src/layers.txt
[ -r "$table" ] || { echo "check_layering: cannot read $table" >&2; exit 2; }

declare -A allowed
while IFS= read -r line; do
  line=${line%%#*}
  [[ $line =~ ^[[:space:]]*$ ]] && continue
  [[ $line == *:* ]] || { echo "check_layering: bad line in $table: $line" >&2; exit 2; }
  allowed[${line%%:*}]=" ${line#*:} "
done <"$table"

# The layer of a file or of an included path: its room when the table has a line for
# "<folder>/<room>" ("store/manifest/manifest.h" -> store/manifest, "codec/chain/typed.h" ->
# codec/chain), else its top-level folder ("codec/codec.h" -> codec, "interpose/wrap/x.h" ->
# interpose: the rooms of interpose are folders by job, no arrows). The forwarder's loose
# headers are rooms of their own ("forwarder/core.h" -> forwarder/core).
layer_of() {
  local p=$1 top rest
  top=${p%%/*}
  rest=${p#*/}
  if [[ $rest == */* ]] && [ -n "${allowed[$top/${rest%%/*}]+x}" ]; then
    echo "$top/${rest%%/*}"
  elif [ "$top" = forwarder ]; then
    echo "forwarder/${rest%.*}"
  else
    echo "$top"
  fi
}

bad=0 checked=0
cd "$root" || exit 2
while IFS= read -r f; do
  rel=${f#src/}
  case $f in
    tools/ckptfwd/*) from=tools/ckptfwd ;;
    *) from=$(layer_of "$rel") ;;
  esac
  if [ -z "${allowed[$from]+x}" ]; then
    echo "$f: its folder $from has no line in src/layers.txt"
    bad=$((bad + 1))
    continue
  fi
  while IFS=: read -r ln inc; do
    [[ $inc == */* ]] || continue  # a header next to the file
    to=$(layer_of "$inc")
    checked=$((checked + 1))
    [ "$to" = "$from" ] && continue
    [[ ${allowed[$from]} == *" $to "* ]] && continue
    # Other folders see every room of a folder they may use (schema may include store/...).
    [[ ${allowed[$from]} == *" ${to%%/*} "* ]] && continue
    # A room may use what its folder as a whole may use (store/x may include codec/...).
    top=${from%%/*}
    if [ "$from" != "$top" ] && [ -n "${allowed[$top]+x}" ] && [ "${to%%/*}" != "$top" ]; then
      [[ ${allowed[$top]} == *" ${to%%/*} "* ]] && continue
    fi
    echo "$f:$ln: includes \"$inc\" ($to), but $from may include only:${allowed[$from]}(src/layers.txt)"
    bad=$((bad + 1))
  done < <(awk 'match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]*"/) {
                 s = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", s); sub(/"$/, "", s)
                 print FNR ":" s }' "$f")
done < <(find src tools/ckptfwd -path tools/ckptfwd/test -prune -o \( -name '*.h' -o -name '*.cc' \) -print | sort)

if [ "$bad" -gt 0 ]; then
  echo "check_layering: $bad include(s) against the arrows of src/layers.txt"
  exit 1
fi
echo "check_layering: $checked includes follow src/layers.txt"
