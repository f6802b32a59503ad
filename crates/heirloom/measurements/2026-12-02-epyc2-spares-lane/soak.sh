#!/usr/bin/env bash
# latched-spares after the lane in the head and the spares without a latch:
# 16 threads told 16 cores (65,536 buckets, waiters that spin), every
# policy, SLI off and on, spin 0 and 200, verified, TM1 / YCSB as DBx1000
# runs it / TPC-C with 4 warehouses / TPC-C one warehouse a thread (misses
# on many rows: detaches and binds) in turn until the time is up.
set -u
H=${H:?}; end=$(( $(date +%s) + ${SECS:-480} )); n=0
while [ "$(date +%s)" -lt "$end" ]; do
  for w in "tm1" "ycsb --profile dbx1000" "tpcc --profile dbx1000 --scale 4" "tpcc --scale 1/thread"; do
    $H bench --workload $w --threads 16 --cores 16 --table latched-spares --sli off,on \
      --policy detect,nowait,waitdie,woundwait --spin 0,200 --duration 0.3 --warmup 0.05 \
      --stuck-after 10 --verify > /tmp/soak-last.txt 2>&1 || { echo "FAILED: $w"; cat /tmp/soak-last.txt; exit 1; }
    n=$((n + 16))
  done
done
echo "soak: $n runs, every one verified, none stuck"
