#!/bin/sh
# help_to_man.sh OUT SECTION NAME DESCRIPTION VERSION COMMAND...: a man page of what COMMAND prints
# (a program's --help), so the page says what the program says; make install puts the
# pages in share/man (tools/install/CMakeLists.txt).
set -eu
out=$1 section=$2 name=$3 desc=$4 version=$5
shift 5
text=$("$@")
{
  printf '.TH %s %s "" "ckptfwd %s" "ckptfwd"\n' "$(echo "$name" | tr a-z A-Z)" "$section" "$version"
  printf '.SH NAME\n%s \\- %s\n' "$name" "$desc"
  printf '.SH DESCRIPTION\n.nf\n'
  # roff: a leading dot or quote would be a request, a backslash an escape.
  printf '%s\n' "$text" | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
  printf '.fi\n.SH SEE ALSO\nckptfwd(1), ckptfwd-forwarder(8), ckptfwd-settings(7); README.md and docs/ in share/doc/ckptfwd\n'
} >"$out"
