#!/bin/bash
# rounds.sh N TABLE rev... : N interleaved rounds (order rotated each round) of
# wound-wait, YCSB as DBx1000 runs it, 32 threads, 1.5 s; one CSV line a run.
N=$1; TAB=$2; shift 2; revs=("$@"); k=${#revs[@]}
for i in $(seq 1 $N); do
  for j in $(seq 0 $((k-1))); do
    r=${revs[$(( (i+j) % k ))]}
    /tmp/hb/heirloom-$r bench --workload ycsb --profile dbx1000 --table $TAB --policy woundwait --threads 32 \
      --duration 1.5 --warmup 0.3 --sli off $EXTRA --seed $i --json /tmp/hb/run.json > /dev/null 2>&1
    python3 -c "
import json; r=json.load(open('/tmp/hb/run.json'))['runs'][0]; c=r['committed']
print('$r,$i,%d,%.3f,%d,%.3f' % (r['tps'], r['abort_causes']['wounded']/c, r['exclusive_runs'], r['per_txn']['waits']))"
  done
done
