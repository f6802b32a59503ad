#!/usr/bin/env bash
# latched before (d77b34c) vs after, ABBA rounds, 2-core VM.
B=/tmp/wt90-rel/release/heirloom A=/work/main/target/release/heirloom
cd /tmp/m90
for r in 1 2 3 4 5 6; do
  if [ $((r % 2)) = 1 ]; then order="B A"; else order="A B"; fi
  for w in tpcc tm1 ycsb; do
    case $w in tpcc) args=(--workload tpcc --scale 1/thread);; tm1) args=(--workload tm1);; ycsb) args=(--workload ycsb --profile dbx1000 --policy nowait);; esac
    for v in $order; do
      bin=${!v}
      $bin bench "${args[@]}" --threads 1,32 --table latched --sli off --warmup 0.3 --duration 1 --json ab-$w-$v-$r.json > /dev/null 2>&1
    done
  done
done
