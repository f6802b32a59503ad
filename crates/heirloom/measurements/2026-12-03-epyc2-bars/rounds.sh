#!/bin/bash
# The 2-core throughput bars of issues 55 and 57, cumulative: 18a38ac (the
# issues' base; its `cargo build --release -p heirloom-bench`, built in a
# worktree, copied to /tmp/heirloom-18a38ac, the "before") against this
# tree (/tmp/heirloom-head, the "after": 1b9ab04 for rounds-1b9ab04.*,
# 0f2f9f1 for rounds.*), interleaved ABBA, into DIR (default /tmp/abbars):
# each round runs
# every cell on both binaries, the order reversed every round. SLI off.
#   issue 55: TM1, YCSB (the kit's default mix) and TPC-C (one warehouse),
#             2 and 32 threads, latched and latch-free;
#   issue 57: YCSB and TPC-C (4 warehouses) as DBx1000 runs them
#             (--profile dbx1000), 8 and 32 threads, both tables, the four
#             policies.
# `python3 ab.py DIR rounds.csv` reads the JSON (workload names: tm1,
# ycsb, tpcc, ycsbdbx, tpccdbx).
DIR=${DIR:-/tmp/abbars}
mkdir -p "$DIR" && cd "$DIR"
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
R0=${R0:-0}
cell() { # build name args...
    local b=$1 name=$2; shift 2
    local tag=$b; [ "$b" = 18a38ac ] && tag=before; [ "$b" = head ] && tag=after
    /tmp/heirloom-$b bench "$@" --duration 0.5 --warmup 0.2 --sli off --seed $r \
        --json $tag-$name-$r.json > $tag-$name-$r.txt 2>&1 || echo "round $r $b $name: failed"
}
for r in $(seq $((R0 + 1)) $((R0 + R))); do
    if [ $((r % 2)) -eq 1 ]; then order="18a38ac head"; else order="head 18a38ac"; fi
    for w in tm1 ycsb tpcc; do
        for b in $order; do
            cell $b $w --workload $w --table latched,latchfree --threads 2,32
        done
    done
    for b in $order; do
        cell $b ycsbdbx --workload ycsb --profile dbx1000 --table latched,latchfree \
            --policy detect,nowait,waitdie,woundwait --threads 8,32
        cell $b tpccdbx --workload tpcc --profile dbx1000 --scale 4 --table latched,latchfree \
            --policy detect,nowait,waitdie,woundwait --threads 8,32
    done
    echo "round $r done $(date +%T)"
done
echo done
