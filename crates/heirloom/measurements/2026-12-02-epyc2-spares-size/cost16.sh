#!/usr/bin/env bash
# 16 and 32 threads on 2 cores, latched-spares at 256 (the old default's first size) against 4,096 buckets (the new default on 1-2 cores), interleaved rounds.
set -u
BIN=${BIN:?}
for w in "tpcc --scale 1/thread" "ycsb --profile dbx1000 --policy nowait" "tm1"; do
  echo "== $w"
  $BIN bench --workload $w --threads 16,32 --table latched-spares --buckets 256,4096 --sli off --duration 0.5 --warmup 0.3 --repeat 5 | grep -E '^(table|latch)'
done
