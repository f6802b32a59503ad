#!/bin/bash
# after (ages from the clock) against counter (the same tree with the counter back), ABBA, 12 rounds.
for r in $(seq 1 12); do
  order="counter after"; [ $((r % 2)) = 0 ] && order="after counter"
  for b in $order; do
    /tmp/h-${b}89 bench --workload ycsb --profile dbx1000 --threads 8,32 --table latched,latchfree --sli off --policy waitdie,woundwait --duration 0.5 --warmup 0.2 --seed $r 2>/dev/null \
      | awk -v b=$b -v r=$r '$1 ~ /^latch/ && $3 ~ /wait/ {print r, b, "ycsb", $1, $3, $4, $5}'
  done
done
