#!/bin/bash
# Row S fast holds on and off, 2 threads on the 2-core EPYC, interleaved rounds.
H=/work/main/target/release/heirloom
cd /tmp/rows2
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
$H bench --workload ycsb --profile dbx1000 --threads 2 --table latched,latchfree --policy nowait,detect --fast-rows on,off --repeat 10 --duration 0.5 --warmup 0.3 --sli off --json ycsb-dbx.json > ycsb-dbx.txt 2>&1
$H bench --workload ycsb --scale 1000000 --opt read-share=1 --opt theta=0.9 --threads 2 --table latched,latchfree --fast-rows on,off --repeat 10 --duration 0.5 --warmup 0.3 --sli off --json ycsb-ro.json > ycsb-ro.txt 2>&1
$H bench --workload tpcc --threads 2 --table latched,latchfree --fast-rows on,off --repeat 10 --duration 0.5 --warmup 0.3 --sli off --json tpcc.json > tpcc.txt 2>&1
$H bench --workload tm1 --threads 2 --table latched,latchfree --fast-rows on,off --repeat 10 --duration 0.5 --warmup 0.3 --sli off --json tm1.json > tm1.txt 2>&1
echo done
