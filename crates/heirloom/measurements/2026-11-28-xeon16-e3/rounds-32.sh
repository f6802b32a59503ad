#!/bin/bash
# 10 ABBA rounds at 32 threads: 18a38ac (before) and the working tree (after).
o=/tmp/rounds; rm -rf $o; mkdir -p $o
B=/tmp/b18-target/release/heirloom; A=/work/main/target/release/heirloom
for r in $(seq 1 10); do
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for b in $order; do
    exe=$B; [ $b = after ] && exe=$A
    for w in tm1 ycsb tpcc; do
      timeout 60 $exe bench --workload $w --threads 32 --table latched,latchfree --sli off --duration 0.5 --warmup 0.2 --seed $r --json $o/$w-$b-$r.json > /dev/null 2>&1 || echo "fail $w $b $r"
    done
  done
done
echo done
