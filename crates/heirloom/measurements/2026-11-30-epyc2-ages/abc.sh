#!/bin/bash
# before (9f6a264), counter (after with the counter back), after: rotating order.
for r in $(seq 1 9); do
  case $((r % 3)) in 0) order="before counter after";; 1) order="counter after before";; 2) order="after before counter";; esac
  for b in $order; do
    /tmp/h-${b}89 bench --workload ycsb --profile dbx1000 --threads 8,32 --table latched,latchfree --sli off --policy waitdie --duration 0.5 --warmup 0.2 --seed $r 2>/dev/null \
      | awk -v b=$b -v r=$r '$1 ~ /^latch/ && $3 ~ /wait/ {print r, b, "ycsb", $1, $3, $4, $5}'
  done
done
