#!/bin/bash
# A second batch for the one cell below 0.95 in ab.sh's (TPC-C, 4
# warehouses, latch-free, 2 threads, where wait-die never waits): 16 more
# ABBA rounds of that cell, wait-die and detect, the same binaries in /tmp/ab2.
cd /tmp/ab2
R=${R:-16}
for r in $(seq 101 $((100 + R))); do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for b in $order; do
        ./heirloom-$b bench --workload tpcc --scale 4 --policy waitdie,detect \
            --table latchfree --threads 2 --duration 0.5 --warmup 0.2 --sli off --seed $r \
            --json $b-tpcc-$r.json > $b-tpcc-$r.txt 2>&1
    done
done
echo done
