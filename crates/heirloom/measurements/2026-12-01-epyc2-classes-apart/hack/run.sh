#!/usr/bin/env bash
# Kit TPC-C --breakdown with the request classes (as the kit has them) and without (NOCLASSES=1), one binary, interleaved rounds.
set -eu
H=/tmp/tgt94nc/release/heirloom
for r in 1 2 3 4; do
    for v in classes noclasses; do
        if [ $v = noclasses ]; then export NOCLASSES=1; else unset NOCLASSES; fi
        $H bench --workload tpcc --scale 1/thread --threads 1,2 --table latched,latchfree --sli off \
            --breakdown --duration 1 --warmup 0.2 --seed $r --json $v-$r.json > $v-$r.txt 2>&1
    done
done
