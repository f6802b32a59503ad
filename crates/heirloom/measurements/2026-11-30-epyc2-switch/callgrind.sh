#!/bin/bash
# Instructions per transaction, before (2acc005: row S fast holds always on)
# and after (the switch, auto by default), callgrind on the txnloop example
# built from each tree ($BEFORE and $AFTER: target dirs with
# release/examples/txnloop), the README's table plus the ycsb loop.
n=100000
for c in "latched off row 0" "latched on row 0" "latchfree off row 0" "latchfree on row 0" "global off row 0" \
         "none off row 0" "latched off tm1 0" "latched on tm1 0" "latched on tm1 64" "latchfree off tm1 0" \
         "latched off db 0" "latchfree off db 0" "latched off ycsb 0" "latchfree off ycsb 0"; do
  read -r table sli loop keep <<< "$c"
  out="$c"
  for bin in "$BEFORE" "$AFTER"; do
    a=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
        --toggle-collect='txnloop::measured' "$bin/release/examples/txnloop" $table $sli $n $loop $keep 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    out="$out $((a / n))"
  done
  echo "$out"
done
