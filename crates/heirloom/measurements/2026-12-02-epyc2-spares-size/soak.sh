#!/usr/bin/env bash
# latched-spares at its new default size (65,536 told 16 cores), every policy,
# SLI off and on, spin 0 and 200, verified, TM1 / YCSB as DBx1000 runs it /
# TPC-C with 4 warehouses in turn until the time is up.
set -u
H=${H:?}; end=$(( $(date +%s) + ${SECS:-480} )); n=0
while [ "$(date +%s)" -lt "$end" ]; do
  for w in "tm1" "ycsb --profile dbx1000" "tpcc --profile dbx1000 --scale 4"; do
    $H bench --workload $w --threads 16 --cores 16 --table latched-spares --sli off,on \
      --policy detect,nowait,waitdie,woundwait --spin 0,200 --duration 0.3 --warmup 0.05 \
      --stuck-after 10 --verify > /tmp/soak-last.txt 2>&1 || { echo "FAILED: $w"; cat /tmp/soak-last.txt; exit 1; }
    n=$((n + 16))
  done
done
echo "soak: $n runs, every one verified, none stuck"
