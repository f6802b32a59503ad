#!/bin/bash
# Nanoseconds a transaction of txnloop's `ro` and `tm1` loops (its own
# print), before and after, ten interleaved rounds of 1,000,000
# transactions each (txnloop-before / txnloop-after: `cargo build
# --release --example txnloop` at af65dbf and at the change).
for r in $(seq 1 10); do
    if [ $((r % 2)) = 1 ]; then o="before after"; else o="after before"; fi
    for b in $o; do
        for c in "latched ro" "latchfree ro" "latched tm1" "latchfree tm1"; do
            set -- $c
            ns=$(./txnloop-$b $1 off 1000000 $2 2>&1 | grep -o "[0-9.]* ns/txn" | awk '{print $1}')
            echo "$r $b $1 $2 $ns"
        done
    done
done
