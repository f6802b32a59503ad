#!/bin/bash
# Before (4ee4a56) against after (c1b85b9), interleaved ABBA: each round
# runs every workload on both binaries (built with `cargo build --release
# -p heirloom-bench` at each commit, copied to /tmp/heirloom-before and
# -after), the order reversed every round. 2 and 32 threads on the 2-core
# EPYC, latched and latch-free, SLI off, the kit's defaults otherwise.
# Batch 1 is this script as it stands (R=12); batch 2 the same with YCSB
# alone, R=20, seeds 101-120; batch 3 YCSB on the latched table alone,
# R=16, seeds 201-216, `--duration 1 --warmup 0.3`. ab.py pools them.
cd /tmp/ab
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-12}
for r in $(seq 1 $R); do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for w in tm1 ycsb tpcc; do
        for b in $order; do
            /tmp/heirloom-$b bench --workload $w --table latched,latchfree --threads 2,32 \
                --duration 0.5 --warmup 0.2 --sli off --seed $r --json $b-$w-$r.json > $b-$w-$r.txt 2>&1
        done
    done
done
echo done
