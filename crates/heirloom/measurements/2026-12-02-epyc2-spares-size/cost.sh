#!/usr/bin/env bash
# One and two threads, latched-spares at 256 (the old default's first size) against 4,096 buckets (the new default on 1-2 cores), interleaved rounds.
set -u
BIN=${BIN:?}
for w in "tpcc --scale 1/thread" "ycsb --profile dbx1000 --policy nowait" "tm1" "ycsb --scale 1000000 --opt read-share=1"; do
  echo "== $w"
  $BIN bench --workload $w --threads 1,2 --table latched-spares --buckets 256,4096 --sli off --duration 0.5 --warmup 0.3 --repeat 5 | grep -E '^(table|latch|#.*(median|ratio|round))'
done
