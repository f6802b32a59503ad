#!/bin/bash
# Issue 55's other 2-core bars at this tree, one after another on a quiet
# machine (H: `cargo build --release -p heirloom-bench`'s heirloom; S: a
# `--features sharing` build's; run from the repository's root):
#   1. read-only uniform YCSB (1M rows, every request a read) at 1 and 2
#      threads against `none`, --repeat 3: the 2-thread share of `none`
#      over the 1-thread share (bar: 0.95);
#   2. the same at 16 threads with the sharing instrument: shared-line
#      writes a transaction (bar: 0.1 on latched, latch-free and swap);
#   3. 300,000 X row locks in one transaction, every table kind (bar:
#      1.5 s);
#   4. scripts/callgrind.sh (bar: every loop within 3% of 18a38ac's, the
#      entry "The walk's ancestors from the leaf's depth").
H=${H:-target/release/heirloom}
S=${S:-target/sharing/release/heirloom}
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
echo "== 1. read-only YCSB, 1 and 2 threads, share of none"
$H bench --workload ycsb --scale 1000000 --opt read-share=1 --threads 1,2 \
    --table latched,latchfree,latchfree-swap,none --sli off --repeat 3 --duration 1 --warmup 0.3 \
    --json /tmp/bars-ro.json | grep -v "^#"
echo "== 2. read-only YCSB, 16 threads, sharing"
$S bench --workload ycsb --scale 1000000 --opt read-share=1 --threads 16 \
    --table latched,latchfree,latchfree-swap --sli off --sharing --warmup 3 --duration 1 | grep -v "^#  "
echo "== 3. 300,000 X row locks"
cargo run -q --release --example manylocks -p heirloom -- 300000
echo "== 4. callgrind"
bash scripts/callgrind.sh "latched off row 0" "latched on row 0" "latchfree off row 0" "latchfree on row 0" \
    "global off row 0" "none off row 0" "latched off tm1 0" "latched on tm1 0" "latched on tm1 64" \
    "latchfree off tm1 0" "latched off db 0" "latchfree off db 0" \
    "latched off ycsb 0" "latchfree off ycsb 0" "latchfree-swap off ycsb 0" "latched-spares off ycsb 0" \
    "latched off ro 0" "latchfree off ro 0"
