#!/usr/bin/env bash
# The global table's partitioned maps and per-agent lists, before and
# after, in interleaved rounds (the order reversed every other round):
# global and global-htm, YCSB as DBx1000 runs it with uniform keys (no hot
# lock), the kit's YCSB, TM1 and TPC-C, at 1, 2 and 8 threads.
#   BEFORE=bin AFTER=bin ROUNDS=4 bash rounds.sh OUT_DIR
set -euo pipefail
out=${1:?usage: rounds.sh OUT_DIR}
rounds=${ROUNDS:-4}
mkdir -p "$out"
run() { # bin tag round name workload args...
    local bin=$1 tag=$2 r=$3 name=$4 w=$5; shift 5
    "$bin" bench --workload "$w" "$@" --threads 1,2,8 --table global,global-htm \
        --sli off --duration 1 --warmup 0.3 --json "$out/$name-$tag-$r.json" > /dev/null
}
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
    for tag in $order; do
        if [ "$tag" = before ]; then bin=$BEFORE; else bin=$AFTER; fi
        run "$bin" "$tag" "$r" uniform ycsb --profile dbx1000 --opt theta=0 --policy nowait
        run "$bin" "$tag" "$r" ycsb ycsb
        run "$bin" "$tag" "$r" tm1 tm1
        run "$bin" "$tag" "$r" tpcc tpcc --scale 1/thread
    done
done
