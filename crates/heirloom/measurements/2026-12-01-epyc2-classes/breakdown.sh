#!/usr/bin/env bash
# Kit TPC-C with --breakdown, before (072cd6f) and after, three
# interleaved rounds; BEFORE and AFTER are the two builds' `heirloom`.
set -eu
for r in 1 2 3; do
    for v in before after; do
        if [ $v = before ]; then H=$BEFORE; else H=$AFTER; fi
        $H bench --workload tpcc --scale 1/thread --threads 1,2 --table latched,latchfree --sli off \
            --fast-rows auto,off --breakdown --duration 1 --warmup 0.2 --seed $r --json $v-$r.json > $v-$r.txt 2>&1
    done
done
