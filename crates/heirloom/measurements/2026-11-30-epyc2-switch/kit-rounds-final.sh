#!/bin/bash
# The final commit (6152182): auto against on and off, 2 threads on the
# 2-core EPYC, 10 interleaved rounds; YCSB as DBx1000 runs it (no-wait),
# read-only YCSB theta 0.9 and TM1.
H=/work/main/target/release/heirloom
mkdir -p /tmp/switch3 && cd /tmp/switch3
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
C=(--repeat 10 --duration 0.5 --warmup 0.3 --sli off --table latched,latchfree --threads 2)
$H bench --workload ycsb --profile dbx1000 --policy nowait --fast-rows auto,on,off "${C[@]}" --json final-ycsb-dbx.json > final-ycsb-dbx.txt 2>&1
$H bench --workload ycsb --scale 1000000 --opt read-share=1 --opt theta=0.9 --fast-rows auto,on,off "${C[@]}" --json final-ycsb-ro.json > final-ycsb-ro.txt 2>&1
$H bench --workload tm1 --fast-rows auto,on,off "${C[@]}" --json final-tm1.json > final-tm1.txt 2>&1
echo done
