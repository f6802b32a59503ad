#!/bin/bash
# excl.sh N: the cells with many exclusive runs at 32 threads (no-wait and
# wait-die, YCSB and TPC-C with 4 warehouses as DBx1000 runs them, both
# tables), 56e35a2 against the serial latch, N ABBA rounds of 1.5-s runs.
N=$1
for i in $(seq 1 $N); do
  if [ $((i % 2)) = 1 ]; then order="56e35a2 latch"; else order="latch 56e35a2"; fi
  for b in $order; do
    for w in "ycsb --profile dbx1000" "tpcc --profile dbx1000 --scale 4"; do
      /tmp/hb/heirloom-$b bench --workload $w --table latched,latchfree --policy nowait,waitdie \
        --threads 32 --duration 1.5 --warmup 0.3 --sli off --seed $i --csv /tmp/hb/e.csv > /dev/null 2>&1
      python3 -c "
import csv
for r in csv.DictReader(open('/tmp/hb/e.csv')): print('$b,$i,${w%% *},32,'+r['table']+','+r['policy']+','+r['tps'])"
    done
  done
done
