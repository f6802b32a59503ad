#!/bin/bash
# Ten interleaved rounds (ABBA), before (9f6a264) and after (ages from the clock): YCSB as DBx1000 runs it and TPC-C 4 warehouses, wait-die and wound-wait, 8 and 32 threads.
for r in $(seq 1 10); do
  order="before after"; [ $((r % 2)) = 0 ] && order="after before"
  for b in $order; do
    /tmp/h-${b}89 bench --workload ycsb --profile dbx1000 --threads 8,32 --table latched,latchfree --sli off --policy waitdie,woundwait --duration 0.5 --warmup 0.2 --seed $r 2>/dev/null \
      | awk -v b=$b -v r=$r '$1 ~ /^latch/ && $3 ~ /wait/ {print r, b, "ycsb", $1, $3, $4, $5}'
    /tmp/h-${b}89 bench --workload tpcc --profile dbx1000 --scale 4 --threads 8,32 --table latched,latchfree --sli off --policy waitdie,woundwait --duration 0.5 --warmup 0.2 --seed $r 2>/dev/null \
      | awk -v b=$b -v r=$r '$1 ~ /^latch/ && $3 ~ /wait/ {print r, b, "tpcc", $1, $3, $4, $5}'
  done
done
