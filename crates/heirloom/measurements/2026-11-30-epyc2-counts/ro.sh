#!/bin/bash
# Read-only YCSB (1M rows, theta 0), 2 threads: 4ee4a56 (before) against
# c1b85b9 (after), and 2e38ca3 (base: the static kit's heirloom-before,
# `BEFORE=2e38ca3 scripts/scale.sh build`), in rotating order. Batch 1:
# R=8, seeds 1-8; batch 2: R=12, seeds 51-62 (`--seed $((r + 50))`).
cd /tmp/ro
for r in $(seq 1 ${R:-8}); do
    if [ $((r % 2)) -eq 1 ]; then order="before after base"; else order="base after before"; fi
    for b in $order; do
        case $b in base) exe=/work/main/kit/bin/heirloom-before ;; *) exe=/tmp/heirloom-$b ;; esac
        $exe bench --workload ycsb --scale 1000000 --opt read-share=1 --table latched,latchfree \
            --threads 2 --duration 0.5 --warmup 0.2 --sli off --seed $((r + 50)) --json $b-ro-$r.json > $b-ro-$r.txt 2>&1
    done
done
echo done
