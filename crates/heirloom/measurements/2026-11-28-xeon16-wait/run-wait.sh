#!/bin/bash
# 16-core data for the wait rule (issue 57): the kit's DBx1000-profile YCSB
# and TPC-C with 4 warehouses under every policy, the spin before parking
# varied; and read-only YCSB against `none` (141be10, bin/heirloom).
cd "$(dirname "$0")"
o=${OUT:-/tmp/out}; mkdir -p $o
exec > >(tee -a $o/log.txt) 2>&1
sec() { echo; echo "=== $* (${SECONDS}s)"; }
sec machine
nproc; grep -m1 'model name' /proc/cpuinfo; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
B="--duration 0.5 --warmup 0.2 --sli off"
for r in 1 2; do
  sec "YCSB dbx1000 profile, 8 and 16 threads, spin 0,5,20,50,200, round $r"
  timeout 150 bin/heirloom bench --workload ycsb --profile dbx1000 --threads 8,16 --table latched,latchfree \
    --policy detect,nowait,waitdie,woundwait --spin 0,5,20,50,200 $B --breakdown --json $o/ycsb-wait-$r.json | grep -vE '^\s*$'
done
sec "TPC-C 4 warehouses, 16 threads, dbx1000 profile, spin 0,50"
timeout 120 bin/heirloom bench --workload tpcc --profile dbx1000 --scale 4 --threads 16 --table latched,latchfree \
  --policy detect,nowait,waitdie,woundwait --spin 0,50 $B --json $o/tpcc4-wait.json | grep -vE '^\s*$'
for theta in 0 0.9; do
  sec "read-only YCSB theta $theta, 16 threads, 2 rounds"
  timeout 60 bin/heirloom bench --workload ycsb --scale 1000000 --opt read-share=1 --opt theta=$theta --threads 1,16 \
    --table none,latched,latchfree --sli off $B --repeat 2 | grep -vE '^\s*$'
done
sec done
