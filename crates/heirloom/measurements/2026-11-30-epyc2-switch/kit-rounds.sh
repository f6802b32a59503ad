#!/bin/bash
# The row side's switch: row S fast holds auto (the default), on (the
# default before) and off, 2 threads on the 2-core EPYC, 10 interleaved
# rounds each; TM1, YCSB and TPC-C also at 32 threads (auto against on).
H=/work/main/target/release/heirloom
mkdir -p /tmp/switch2 && cd /tmp/switch2
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
C=(--repeat 10 --duration 0.5 --warmup 0.3 --sli off --table latched,latchfree)
$H bench --workload ycsb --profile dbx1000 --threads 2 --policy nowait,detect --fast-rows auto,on,off "${C[@]}" --json ycsb-dbx.json > ycsb-dbx.txt 2>&1
$H bench --workload ycsb --scale 1000000 --opt read-share=1 --opt theta=0.9 --threads 2 --fast-rows auto,on,off "${C[@]}" --json ycsb-ro.json > ycsb-ro.txt 2>&1
$H bench --workload tpcc --threads 2 --fast-rows auto,on,off "${C[@]}" --json tpcc.json > tpcc.txt 2>&1
$H bench --workload tm1 --threads 2 --fast-rows auto,on,off "${C[@]}" --json tm1.json > tm1.txt 2>&1
$H bench --workload tm1 --threads 32 --fast-rows auto,on "${C[@]}" --json tm1-32.json > tm1-32.txt 2>&1
$H bench --workload ycsb --threads 32 --fast-rows auto,on "${C[@]}" --json ycsb-32.json > ycsb-32.txt 2>&1
$H bench --workload tpcc --threads 32 --fast-rows auto,on "${C[@]}" --json tpcc-32.json > tpcc-32.txt 2>&1
echo done
