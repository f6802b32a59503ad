#!/bin/bash
# 16-core confirmation, ABBA order: DBx1000 with heirloom before/after (no-wait,
# latched and latch-free), TPC-C W=16 and YCSB theta 0.9, 16 threads; the kit's TPC-C.
cd "$(dirname "$0")"
o=${OUT:-/tmp/out}; mkdir -p $o
exec > >(tee -a $o/r4.txt) 2>&1
nproc; grep -m1 'model name' /proc/cpuinfo; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
ghz=$(dbx/tsc 2>/dev/null || echo 2.1); echo "TSC GHz $ghz"; export DBX_CPU_FREQ=$ghz
one() { # name exe env...
  local name=$1 exe=$2; shift 2
  local log; log=$(cd dbx && env "$@" timeout 15 "./$exe" "${ARGS[@]}" 2>&1) || true
  echo "$name $(awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
       /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
             n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log")"
}
for cell in "TPCC -t16 -n16" "YCSB -t16 -z0.9 -s1048576 -R16 -r0.5 -w0.5"; do
  read -r bn rest <<< "$cell"; read -r -a ARGS <<< "$rest"
  for r in 1 2 3 4; do
    echo "## $bn r$r"
    one dbx-NO_WAIT rundb-$bn-NO_WAIT
    if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
    for v in $order; do
      x=rundb-$bn-HEIRLOOM; [ $v = before ] && x=rundb-$bn-HEIRLOOM-before
      for t in latched latchfree; do
        one "$v-$t" $x HEIRLOOM_INTENTION=0 HEIRLOOM_TABLE=$t HEIRLOOM_POLICY=nowait
      done
    done
  done
done
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for b in $order; do
    echo "## kit tpcc16 r$r $b"
    timeout 40 bin/$b bench --workload tpcc --scale 1/thread --threads 16 --table latched,latchfree --sli off --duration 0.5 --warmup 0.2 --breakdown --json $o/k-$b-$r.json | grep -E '^(latched|latchfree)'
  done
done
echo "## done ${SECONDS}s"
