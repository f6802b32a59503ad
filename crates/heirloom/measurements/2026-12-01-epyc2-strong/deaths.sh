#!/usr/bin/env bash
# Wait-die's deaths on the latched table by what stood in the way: a build
# of the tree with deaths.patch applied (a throwaway count in
# Queue::older_in_way), the kit's DBx1000 profiles, 3-s runs. Each run
# prints a running count every 1,000 deaths; the last line is the figure.
set -euo pipefail
H=${H:-target/release/heirloom}
for w in "tpcc --scale 4" "ycsb"; do
    for t in 4 16; do
        echo "== $w, $t threads"
        "$H" bench --workload $w --profile dbx1000 --threads "$t" --table latched --sli off --policy waitdie \
            --duration 3 --warmup 0.5 2>&1 | grep -E '^deaths|^latched' | tail -2
    done
done
