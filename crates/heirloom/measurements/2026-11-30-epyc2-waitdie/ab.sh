#!/bin/bash
# Before (616c48a) against after (eab775f: wait-die judged before a request
# is linked), interleaved ABBA: each round runs every workload on both
# binaries (`cargo build --release -p heirloom-bench` at each commit,
# copied to /tmp/ab/heirloom-before and -after), the order reversed every
# round. The 2-core EPYC; 2, 8 and 32 threads; latched and latch-free; SLI
# off. YCSB as DBx1000 runs it (theta 0.9, 16 requests, half writes) under
# every waiting policy and no-wait; TPC-C with 4 warehouses under wait-die
# and detect; TM1 with the defaults. ab.py reads the JSON.
cd /tmp/ab
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
for r in $(seq 1 $R); do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for b in $order; do
        ./heirloom-$b bench --workload ycsb --profile dbx1000 --policy waitdie,woundwait,nowait,detect \
            --table latched,latchfree --threads 2,8,32 --duration 0.5 --warmup 0.2 --sli off --seed $r \
            --json $b-ycsb-$r.json > $b-ycsb-$r.txt 2>&1
        ./heirloom-$b bench --workload tpcc --scale 4 --policy waitdie,detect \
            --table latched,latchfree --threads 2,8,32 --duration 0.5 --warmup 0.2 --sli off --seed $r \
            --json $b-tpcc-$r.json > $b-tpcc-$r.txt 2>&1
        ./heirloom-$b bench --workload tm1 --table latched,latchfree --threads 2,32 \
            --duration 0.5 --warmup 0.2 --sli off --seed $r --json $b-tm1-$r.json > $b-tm1-$r.txt 2>&1
    done
done
echo done
