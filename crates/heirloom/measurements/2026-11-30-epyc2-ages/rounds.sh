#!/bin/bash
# Interleaved rounds: before/after, TM1 and read-only YCSB, waitdie and woundwait, 1 thread.
for r in 1 2 3 4 5 6; do
  for b in before after; do
    for w in tm1 ro; do
      if [ $w = tm1 ]; then args=(--workload tm1); else args=(--workload ycsb --scale 1000000 --opt read-share=1); fi
      /tmp/h-${b}89 bench "${args[@]}" --threads 1 --table latched,latchfree --sli off --policy waitdie,woundwait --duration 0.5 --warmup 0.2 --seed $r 2>/dev/null \
        | awk -v b=$b -v w=$w -v r=$r '$1 ~ /^latch/ && $3 ~ /wait/ {print r, b, w, $1, $3, $5}'
    done
  done
done
