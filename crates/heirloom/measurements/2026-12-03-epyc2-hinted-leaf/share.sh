#!/usr/bin/env bash
# Interleaved rounds: the before and after kits one after the other, order
# reversed every round. Read-only YCSB (1M rows, uniform) at 1 and 2
# threads, none/latched/latchfree; TM1 at 1 and 2 threads, latched/latchfree.
set -u
B=${B:?before binary}; A=${A:?after binary}; OUTD=${OUTD:?}; ROUNDS=${ROUNDS:-10}
mkdir -p "$OUTD"
run() { # bin tag round
    "$1" bench --workload ycsb --scale 1000000 --opt read-share=1 --threads 1,2 --table none,latched,latchfree \
        --sli off --duration 1 --warmup 0.3 --json "$OUTD/ro-$2-$3.json" > /dev/null 2>&1
    "$1" bench --workload tm1 --threads 1,2 --table latched,latchfree --sli off --duration 1 --warmup 0.3 \
        --json "$OUTD/tm1-$2-$3.json" > /dev/null 2>&1
}
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then run "$B" before "$r"; run "$A" after "$r"; else run "$A" after "$r"; run "$B" before "$r"; fi
done
