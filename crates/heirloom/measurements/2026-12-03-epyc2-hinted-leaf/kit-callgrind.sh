#!/bin/bash
# Instructions a kit transaction, one thread, before and after: callgrind
# collects the worker threads' loop (`runner::worker`), and percall.py
# divides the inclusive count of each function named by its calls.
# heirloom-before / heirloom-after: `cargo build --release -p heirloom-bench`
# at af65dbf and at the change.
for v in before after; do
    for t in none latched latchfree; do
        valgrind --tool=callgrind --callgrind-out-file=cg-ro-$v-$t.out --collect-atstart=no \
            --toggle-collect='heirloom_bench::runner::worker*' ./heirloom-$v bench --workload ycsb \
            --scale 1000000 --opt read-share=1 --threads 1 --table $t --sli off --duration 2 --warmup 0.3 > /dev/null 2>&1
        echo "== read-only YCSB $v $t"
        python3 percall.py cg-ro-$v-$t.out "runner::body" "Transaction::commit"
    done
    for t in latched latchfree; do
        valgrind --tool=callgrind --callgrind-out-file=cg-tm1-$v-$t.out --collect-atstart=no \
            --toggle-collect='heirloom_bench::runner::worker*' ./heirloom-$v bench --workload tm1 \
            --threads 1 --table $t --sli off --duration 3 --warmup 0.5 > /dev/null 2>&1
        echo "== TM1 $v $t"
        python3 percall.py cg-tm1-$v-$t.out "runner::body" "Transaction::commit"
    done
done
