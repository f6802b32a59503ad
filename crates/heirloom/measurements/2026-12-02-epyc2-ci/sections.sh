#!/usr/bin/env bash
# Seconds per section of a .ci/run log whose lines carry the epoch second
# they were printed at, made on a clean clone with
#   (CI=true bash .ci/run 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(date +%s)" "$l"; done > ci.log;
#    echo "rc=${PIPESTATUS[0]} end=$(date +%s)" >> ci.log)
#
#   bash sections.sh ci.log
awk '
/^[0-9]+ == /{ if (name != "") printf "%5d  %s\n", $1 - t, name; t = $1; name = substr($0, index($0, "==") + 3); if (start == 0) start = $1; next }
/^rc=/{ split($2, e, "="); printf "%5d  %s\n", e[2] - t, name; printf "%5d  total (%s)\n", e[2] - start, $1; next }
' "$1"
