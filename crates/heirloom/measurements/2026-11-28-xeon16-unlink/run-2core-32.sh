#!/bin/bash
# 2-core check at 32 threads: 3d75b83 (kit/bin/heirloom-before) against 141be10 (kit/bin/heirloom), 10 interleaved rounds.
cd /work/main/kit
for r in $(seq 1 10); do
  order="heirloom-before heirloom"; [ $((r % 2)) = 0 ] && order="heirloom heirloom-before"
  for w in tm1 ycsb tpcc; do
    for b in $order; do
      echo "## round $r $b $w"
      timeout 60 bin/$b bench --workload $w --threads 32 --table latched,latchfree --sli off --duration 1 --warmup 0.3 2>&1 | grep -E '^(latched|latchfree) '
    done
  done
done
echo done
