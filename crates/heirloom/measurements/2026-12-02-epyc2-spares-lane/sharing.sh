#!/usr/bin/env bash
# Shared (recent) line writes a transaction, latched-spares at its default
# size beside latched, 16 threads told 16 cores; BIN is a --features sharing
# build of the commit measured.
set -u
BIN=${BIN:?}
common=(--threads 16 --cores 16 --sli off --duration 1 --warmup 3 --sharing --table latched-spares,latched)
echo "== tpcc"; $BIN bench --workload tpcc --scale 1/thread --policy nowait "${common[@]}" | grep -E '^(table|latch)|^# (buckets|sharing,)'
echo "== ycsb dbx1000"; $BIN bench --workload ycsb --profile dbx1000 --policy nowait "${common[@]}" | grep -E '^(table|latch)|^# (buckets|sharing,)'
echo "== tm1"; $BIN bench --workload tm1 "${common[@]}" | grep -E '^(table|latch)|^# (buckets|sharing,)'
