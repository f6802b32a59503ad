#!/bin/bash
# The scaling issue's 32-thread bar: 18a38ac ("before", its
# `cargo build --release -p heirloom-bench` copied to /tmp/heirloom86-18a38ac)
# against this change ("after", /tmp/heirloom86-after, as in ab.sh),
# interleaved ABBA, 32 threads on the 2-core EPYC, latched and latch-free,
# SLI off. `python3 ab.py /tmp/ab86b ab-18a38ac-rounds.csv` reads them.
# Two batches: rounds 1-10, then 11-20 (`R0=10`).
mkdir -p /tmp/ab86b && cd /tmp/ab86b
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
R0=${R0:-0}
for r in $(seq $((R0 + 1)) $((R0 + R))); do
    if [ $((r % 2)) -eq 1 ]; then order="18a38ac after"; else order="after 18a38ac"; fi
    for w in tm1 ycsb tpcc; do
        for b in $order; do
            name=$b; [ "$b" = 18a38ac ] && name=before
            /tmp/heirloom86-$b bench --workload $w --table latched,latchfree --threads 32 \
                --duration 0.5 --warmup 0.2 --sli off --seed $r --json $name-$w-$r.json > $name-$w-$r.txt 2>&1
        done
    done
done
echo done
