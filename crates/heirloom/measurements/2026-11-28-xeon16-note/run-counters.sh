#!/bin/bash
# 16-core check: TPC-C cycles and instructions per transaction at 1 and 16
# threads (after), three rounds; --breakdown beside it in the same runs.
cd "$(dirname "$0")"
o=${OUT:-/tmp/out}; mkdir -p $o
exec > >(tee -a $o/log2.txt) 2>&1
nproc; grep -m1 'model name' /proc/cpuinfo; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
cat /proc/sys/kernel/perf_event_paranoid
B="--duration 0.5 --warmup 0.2 --sli off"
for r in 1 2 3; do
  echo "## round $r counters"
  timeout 60 bin/heirloom bench --workload tpcc --scale 1/thread --threads 1,16 --table latched,latchfree $B --counters 2>&1 | grep -vE '^\s*$' | grep -E '^(table|latch|heirloom)'
  echo "## round $r breakdown"
  timeout 60 bin/heirloom bench --workload tpcc --scale 1/thread --threads 1,16 --table latched,latchfree $B --breakdown 2>&1 | grep -E '^(table|latch)'
done
echo "## YCSB default mix counters 1,16"
timeout 60 bin/heirloom bench --workload ycsb --threads 1,16 --table latched,latchfree $B --counters 2>&1 | grep -E '^(table|latch|heirloom)'
echo "## done ${SECONDS}s"
