#!/bin/bash
# The cell that fell: latch-free no-wait, TPC-C with 4 warehouses as
# DBx1000 runs it, 32 threads on 2 cores; would_block aborts a commit
# (18a38ac 0.10-0.12, 1b9ab04 0.27-0.29; the latched table beside it as a
# control). `git bisect run` over 18a38ac..1b9ab04 in a worktree at
# /tmp/wtb built into /tmp/wtb-target: bad when both runs count over 0.2.
# One line a build in bisect.txt. (As run: test.sh and run.sh below were
# /tmp/bisect-test.sh and /tmp/bisect-run.sh.)
cat > /tmp/bisect-test.sh <<'T'
#!/bin/bash
BIN=$1
for i in 1 2; do
$BIN bench --workload tpcc --profile dbx1000 --scale 4 --table latchfree,latched --policy nowait --threads 32 --duration 0.5 --warmup 0.2 --sli off --seed $i --json /tmp/bis.json > /dev/null 2>&1
python3 -c "
import json
d=json.load(open('/tmp/bis.json'))
print(' '.join(f\"{r['table']}: {r['tps']/1000:.0f}k wb/commit {r['abort_causes']['would_block']/max(r['committed'],1):.3f}\" for r in d['runs']))
"
done
T
cat > /tmp/bisect-run.sh <<'T'
#!/bin/bash
cd /tmp/wtb
CARGO_TARGET_DIR=/tmp/wtb-target cargo build --release -p heirloom-bench > /tmp/bisect-build.log 2>&1 || exit 125
out=$(/tmp/bisect-test.sh /tmp/wtb-target/release/heirloom)
echo "$(git log -1 --format=%h) $out" >> /tmp/bisect.log
n=$(echo "$out" | python3 -c "
import sys,re
v=[float(re.search(r'latchfree: \S+ wb/commit ([\d.]+)',l).group(1)) for l in sys.stdin if 'latchfree' in l]
print(sum(1 for x in v if x>0.2))")
[ "$n" -ge 2 ] && exit 1
[ "$n" -eq 0 ] && exit 0
exit 125
T
chmod +x /tmp/bisect-test.sh /tmp/bisect-run.sh
cd /tmp/wtb && git bisect start 1b9ab04 18a38ac && git bisect run /tmp/bisect-run.sh
