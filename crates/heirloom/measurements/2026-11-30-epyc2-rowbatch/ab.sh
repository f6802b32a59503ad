#!/bin/bash
# Before (8ec957b) against after (a transaction's row S fast holds cleared
# at once at its end, one fence for all), interleaved ABBA: each round runs
# every workload on both binaries (`cargo build --release -p heirloom-bench`
# at each, copied to /tmp/heirloom87-before and -after), the order reversed
# every round. `ro`: read-only YCSB over 1M rows (the scaling issue's share
# of `none`), `none` in the same run; tm1, ycsb and tpcc: the kit's
# defaults at 2 and 32 threads. SLI off. ab.py reads the JSON files. A
# second batch ran TPC-C alone, rounds 11-20 (`R0=10 R=10 WORKLOADS=tpcc`).
cd /tmp/ab87
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
R0=${R0:-0}
for r in $(seq $((R0 + 1)) $((R0 + R))); do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for w in ${WORKLOADS:-ro tm1 ycsb tpcc}; do
        case $w in
            ro) args="--workload ycsb --scale 1000000 --opt read-share=1 --table none,latched,latchfree,latchfree-swap --threads 1,2 --duration 1 --warmup 0.3" ;;
            *) args="--workload $w --table latched,latchfree --threads 2,32 --duration 0.5 --warmup 0.2" ;;
        esac
        for b in $order; do
            # shellcheck disable=SC2086
            /tmp/heirloom87-$b bench $args --sli off --seed $r --json $b-$w-$r.json > $b-$w-$r.txt 2>&1
        done
    done
done
echo done
