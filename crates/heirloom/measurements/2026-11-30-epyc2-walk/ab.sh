#!/bin/bash
# Before (4d499be) against after (the walk's ancestors from the leaf's
# depth, the latched miss path's growth bound asked only when needed),
# interleaved ABBA: each round runs every workload on both binaries (built
# with `cargo build --release -p heirloom-bench` at each, copied to
# /tmp/heirloom86-before and -after), the order reversed every round. 2 and
# 32 threads on the 2-core EPYC, latched and latch-free, SLI off, the
# kit's defaults otherwise. ab.py reads the JSON files. A second batch ran
# TPC-C alone, rounds 11-20 (`R0=10 R=10 WORKLOADS=tpcc`).
cd /tmp/ab86
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
R0=${R0:-0}
for r in $(seq $((R0 + 1)) $((R0 + R))); do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for w in ${WORKLOADS:-tm1 ycsb tpcc}; do
        for b in $order; do
            /tmp/heirloom86-$b bench --workload $w --table latched,latchfree --threads 2,32 \
                --duration 0.5 --warmup 0.2 --sli off --seed $r --json $b-$w-$r.json > $b-$w-$r.txt 2>&1
        done
    done
done
echo done
