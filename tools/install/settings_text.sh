#!/bin/sh
# settings_text.sh README: the README's "Settings" section as plain text (the settings
# page, ckptfwd-settings(7), says what the README says).
set -eu
awk '/^## Settings$/ {on = 1; next} on && /^## / {exit} on' "$1" |
  sed -e 's/`//g' -e 's/^| *//' -e 's/ *|$//' -e 's/ | /  --  /g' -e '/^---|/d' -e '/^|---/d'
