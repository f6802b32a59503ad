#!/bin/bash
# Wound-wait at 32 threads, latched, YCSB as DBx1000 runs it: a build is bad
# when the median of four 1.5-s runs counts over 3.0 wounded aborts a
# commit. Run as `git bisect run` in a worktree at /tmp/wtb over
# 18a38ac..1b9ab04 (bisect-ww.txt: one line a build).
cd /tmp/wtb
CARGO_TARGET_DIR=/tmp/wtb-target cargo build --release -p heirloom-bench > /tmp/bisect-build.log 2>&1 || exit 125
B=/tmp/wtb-target/release/heirloom
vals=""
for i in 1 2 3 4; do
  $B bench --workload ycsb --profile dbx1000 --table latched --policy woundwait --threads 32 --duration 1.5 --warmup 0.3 --sli off --seed $i --json /tmp/bww.json > /dev/null 2>&1
  v=$(python3 -c "
import json; r=json.load(open('/tmp/bww.json'))['runs'][0]; print(round(r['abort_causes']['wounded']/r['committed'],3))")
  vals="$vals $v"
done
med=$(echo $vals | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print (a[2]+a[3])/2}')
echo "$(git log -1 --format=%h) median $med ($vals)" >> /tmp/bisect-ww2.log
python3 -c "import sys; sys.exit(1 if $med > 3.0 else 0)"
