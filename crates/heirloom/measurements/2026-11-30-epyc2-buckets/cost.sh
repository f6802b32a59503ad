#!/usr/bin/env bash
# What a larger latch-free table costs a thread (its buckets' cache
# footprint: 4,096 buckets are 512 KiB, 65,536 are 8 MiB), on 1 and 2
# threads, both sizes in every round (--repeat interleaves them):
#   cargo build --release -p heirloom-bench; bash cost.sh > cost.txt
set -u
B=${B:-target/release/heirloom}
grep -m1 'model name' /proc/cpuinfo; nproc; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
for w in "tm1" "ycsb --profile dbx1000 --policy nowait" "ycsb --scale 1000000" "tpcc --scale 1/thread"; do
    echo "== $w"
    # shellcheck disable=SC2086
    $B bench --workload $w --threads 1,2 --table latchfree,latchfree-swap --buckets 4096,65536 \
        --sli off --duration 0.5 --warmup 0.3 --repeat 5 2>&1 | grep -E '^(table|latchfree)' | awk '{print $1, $4, $5, $NF}'
done
