#!/usr/bin/env bash
# Kit TPC-C with --breakdown, with the request classes (--classes) and
# without, one binary (H), four interleaved rounds.
set -eu
H=${H:-heirloom}
for r in $(seq 1 ${ROUNDS:-4}); do
    for v in classes plain; do
        if [ $v = classes ]; then c=--classes; else c=; fi
        $H bench --workload tpcc --scale 1/thread --threads 1,2 --table latched,latchfree --sli off \
            --breakdown $c --duration 1 --warmup 0.2 --seed $r --json $v-$r.json > $v-$r.txt 2>&1
    done
done
