#!/usr/bin/env bash
# Interleaved rounds on the 2-core VM: latched vs latched-spares (same binary).
H=/work/main/target/release/heirloom
cd /tmp/m90
$H bench --workload tpcc --scale 1/thread --threads 1,16,32 --table latched,latched-spares --sli off --warmup 0.3 --duration 1 --repeat 8 --json r-tpcc.json > r-tpcc.txt 2>&1
$H bench --workload tm1 --threads 1,16,32 --table latched,latched-spares --sli off --warmup 0.3 --duration 1 --repeat 8 --json r-tm1.json > r-tm1.txt 2>&1
$H bench --workload ycsb --profile dbx1000 --policy nowait --threads 1,16,32 --table latched,latched-spares --sli off --warmup 0.3 --duration 1 --repeat 8 --json r-ycsb.json > r-ycsb.txt 2>&1
