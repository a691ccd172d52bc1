#!/bin/sh
# settings_text.sh SETTINGS_MD: docs/settings.md as plain text (the settings page,
# ckptfwd-settings(7), says what the settings reference says): headings and fences
# dropped (code kept, indented), links as their text, table rows as "a  --  b  --  c".
set -eu
awk 'NR == 1 && /^# / {next}
     /^```/ {code = !code; next}
     code {print "    " $0; next}
     {sub(/^#+ */, ""); print}' "$1" |
  sed -e 's/`//g' -e 's/\[\([^]]*\)\]([^)]*)/\1/g' \
    -e 's/^| *//' -e 's/ *|$//' -e 's/ | /  --  /g' -e '/^---|/d' -e '/^|---/d'
