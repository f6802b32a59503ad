#!/bin/bash
# Before (af65dbf) against after (the hinted leaf out of the walk),
# interleaved ABBA: each round runs every workload on both binaries (built
# with `cargo build --release -p heirloom-bench` at each, copied to
# /tmp/heirloom96-before and -after), the order reversed every round. 2 and
# 32 threads on the 2-core EPYC, latched and latch-free, SLI off, the
# kit's defaults otherwise. `python3 ../2026-11-30-epyc2-walk/ab.py
# /tmp/ab2/runs "$PWD/ab-rounds.csv"`, run here, reads the JSON files
# (ab.txt, ab-rounds.csv).
mkdir -p /tmp/ab2/runs && cd /tmp/ab2/runs
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
R0=${R0:-0}
for r in $(seq $((R0 + 1)) $((R0 + R))); do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for w in ${WORKLOADS:-tm1 ycsb tpcc}; do
        for b in $order; do
            /tmp/heirloom96-$b bench --workload $w --table latched,latchfree --threads 2,32 \
                --duration 0.5 --warmup 0.2 --sli off --seed $r --json $b-$w-$r.json > $b-$w-$r.txt 2>&1
        done
    done
done
echo done
