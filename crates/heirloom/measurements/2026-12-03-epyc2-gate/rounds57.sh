#!/bin/bash
# Issue 57's 2-core kit bar at the tip after the serial latch: 18a38ac
# (/tmp/heirloom-18a38ac, the "before") against this tree
# (/tmp/heirloom-head, the "after"), interleaved ABBA into DIR (default
# /tmp/ab57): YCSB and TPC-C (4 warehouses) as DBx1000 runs them, 8 and 32
# threads, both tables, the four policies, 0.5-s runs, SLI off (the cells
# of ../2026-12-03-epyc2-bars/rounds.sh for issue 57). Read with
# `python3 ../2026-12-03-epyc2-bars/ab.py DIR ../2026-12-03-epyc2-gate/rounds57.csv`.
DIR=${DIR:-/tmp/ab57}
mkdir -p "$DIR" && cd "$DIR"
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
R=${R:-10}
cell() { # build name args...
    local b=$1 name=$2; shift 2
    local tag=$b; [ "$b" = 18a38ac ] && tag=before; [ "$b" = head ] && tag=after
    /tmp/heirloom-$b bench "$@" --duration 0.5 --warmup 0.2 --sli off --seed $r \
        --json $tag-$name-$r.json > $tag-$name-$r.txt 2>&1 || echo "round $r $b $name: failed"
}
for r in $(seq 1 $R); do
    if [ $((r % 2)) -eq 1 ]; then order="18a38ac head"; else order="head 18a38ac"; fi
    for b in $order; do
        cell $b ycsbdbx --workload ycsb --profile dbx1000 --table latched,latchfree \
            --policy detect,nowait,waitdie,woundwait --threads 8,32
        cell $b tpccdbx --workload tpcc --profile dbx1000 --scale 4 --table latched,latchfree \
            --policy detect,nowait,waitdie,woundwait --threads 8,32
    done
    echo "round $r done $(date +%T)"
done
echo done
