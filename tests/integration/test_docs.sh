#!/usr/bin/env bash
# The README and docs/ hold together (docs_check.py): the README fits one screen (60
# lines) and links every page of docs/; every relative link of the README and docs/
# names a file of the repository and a heading of it. (The settings reference is checked
# against the code by the unit test core_settings_reference_test.cc.)
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
/usr/bin/python3 "$(dirname "$0")/docs_check.py" "$CKF_REPO" >"$T/check.out" 2>&1 ||
  fail "the docs do not hold together: $(cat "$T/check.out")"
ok "$(tail -1 "$T/check.out")"
