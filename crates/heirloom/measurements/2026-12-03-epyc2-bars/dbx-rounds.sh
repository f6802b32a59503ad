#!/bin/bash
# Issue 57's 2-core bar inside DBx1000: YCSB theta 0.9 at 2 threads (16
# requests, half writes), DBx1000's NO_WAIT, WAIT_DIE and DL_DETECT as
# shipped (jemalloc) beside heirloom's no-wait, wait-die and detect on the
# latched and latch-free tables with their defaults, without intention
# locks (as DBx1000 locks). `scripts/dbx1000.sh build /tmp/dbxsrc
# /tmp/dbxout3` at 0f2f9f1 (DBx1000 at 5f172a9, 200,000 transactions a
# thread);
# ROUNDS interleaved rounds, the order turned every round. One line a run:
# round, cell, txn/s, aborted attempts a commit. `dbx-summary.py` reads it.
cd /tmp/dbxout3; export DBX_CPU_FREQ=$(./tsc)
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo; cat malloc
one() { # name env...
  local n=$1; shift
  local exe=./rundb-YCSB-HEIRLOOM; case $n in NO_WAIT|WAIT_DIE|DL_DETECT) exe=./rundb-YCSB-$n;; esac
  local out; out=$(env "$@" timeout 60 $exe -t2 -z0.9 -s1048576 -R16 -r0.5 -w0.5 2>&1 | grep -E "summary")
  python3 -c "import re,sys; s=sys.argv[2]; t=int(re.search(r'txn_cnt=(\d+)',s).group(1)); a=int(re.search(r'abort_cnt=(\d+)',s).group(1)); r=float(re.search(r'run_time=([\d.]+)',s).group(1)); print(sys.argv[1], round(t/r), round(a/t,3))" "$n" "$out" \
    || echo "$n failed"
}
I="HEIRLOOM_INTENTION=0"
C=("NO_WAIT X=1" "WAIT_DIE X=1" "DL_DETECT X=1"
   "lf-nowait $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=nowait"
   "lf-waitdie $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=waitdie"
   "lf-detect $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=detect"
   "lat-nowait $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=nowait"
   "lat-waitdie $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=waitdie"
   "lat-detect $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=detect")
for r in $(seq 1 ${ROUNDS:-10}); do
  if [ $((r%2)) = 1 ]; then L=("${C[@]}"); else mapfile -t L < <(printf '%s\n' "${C[@]}" | tac); fi
  for c in "${L[@]}"; do echo "$r $(one $c)"; done
done
