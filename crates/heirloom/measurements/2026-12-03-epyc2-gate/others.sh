#!/bin/bash
# others.sh N: the other policies and 8 threads, the tip before (56e35a2)
# against the serial latch, N interleaved rounds of 0.5-s runs, YCSB and
# TPC-C (4 warehouses) as DBx1000 runs them; one CSV line a run.
N=$1
for i in $(seq 1 $N); do
  for b in 56e35a2 latch; do [ $((i % 2)) = 0 ] && b=$([ $b = latch ] && echo 56e35a2 || echo latch)
    for w in "ycsb --profile dbx1000" "tpcc --profile dbx1000 --scale 4"; do
      for t in 8 32; do
        /tmp/hb/heirloom-$b bench --workload $w --table latched,latchfree --policy nowait,waitdie,detect,woundwait \
          --threads $t --duration 0.5 --warmup 0.2 --sli off --seed $i --csv /tmp/hb/o.csv > /dev/null 2>&1
        python3 -c "
import csv
for r in csv.DictReader(open('/tmp/hb/o.csv')): print('$b,$i,${w%% *},$t,'+r['table']+','+r['policy']+','+r['tps'])"
      done
    done
  done
done
