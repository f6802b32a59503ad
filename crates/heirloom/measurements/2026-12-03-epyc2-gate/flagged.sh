#!/bin/bash
# flagged.sh N: two cells of rounds57.txt below 0.95 that have exclusive
# runs (TPC-C with 4 warehouses, latched, wait-die; YCSB, latch-free,
# detect; both as DBx1000 runs them, 32 threads), 1.5-s runs, 18a38ac,
# 56e35a2 (before the serial latch) and the tip (/tmp/heirloom-head), the
# order rotated each round; one CSV line a run.
N=$1; revs=(18a38ac 56e35a2 head)
for i in $(seq 1 $N); do
  for j in 0 1 2; do b=${revs[$(( (i + j) % 3 ))]}
    bin=/tmp/hb/heirloom-$b; [ $b = head ] && bin=/tmp/heirloom-head
    for c in "tpcc --scale 4 --table latched --policy waitdie" "ycsb --table latchfree --policy detect"; do
      $bin bench --workload $c --profile dbx1000 --threads 32 --duration 1.5 --warmup 0.3 --sli off \
        --seed $i --json /tmp/hb/f.json > /dev/null 2>&1
      python3 -c "
import json; r=json.load(open('/tmp/hb/f.json'))['runs'][0]
print('$b,$i,'+r['workload']+','+r['table']+','+r['policy']+',%d,%d' % (r['tps'], r['exclusive_runs']))"
    done
  done
done
