#!/bin/bash
# BATCH 32 (h-after89, 579fd6d) against 128 (h-b128-89), ABBA, 8 rounds: 32 threads (the scaling issue's bar's command) and 1 thread, latch-free tables.
for r in $(seq 1 8); do
  order="after b128"; [ $((r % 2)) = 0 ] && order="b128 after"
  for b in $order; do
    for w in tm1 ycsb tpcc; do
      /tmp/h-${b}89 bench --workload $w --threads 1,32 --table latchfree,latchfree-swap --sli off --duration 1 --warmup 0.3 --seed $r 2>/dev/null \
        | awk -v b=$b -v r=$r -v w=$w '$1 ~ /^latch/ {print r, b, w, $1, $4, $5}'
    done
  done
done
