#!/bin/bash
# 16-core check: the latched bind and the single fast attempt (before/after),
# and bucket counts for TPC-C, inside DBx1000 too.
cd "$(dirname "$0")"
o=${OUT:-/tmp/out}; mkdir -p $o
exec > >(tee -a $o/e3.txt) 2>&1
nproc; grep -m1 'model name' /proc/cpuinfo; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
ghz=$(dbx/tsc 2>/dev/null || echo 2.1); echo "TSC GHz $ghz"; export DBX_CPU_FREQ=$ghz
B="--sli off --duration 0.5 --warmup 0.2 --breakdown"
sec() { echo; echo "=== $* (${SECONDS}s)"; }
sec "A: kit TPC-C 1 and 16 threads, default buckets, before/after"
for r in 1 2 3; do
  for b in before after; do
    echo "## A r$r $b"
    timeout 40 bin/$b bench --workload tpcc --scale 1/thread --threads 1,16 --table latched,latchfree $B --json $o/a-$b-$r.json | grep -E '^(latched|latchfree)'
  done
done
sec "B: kit TPC-C, after, buckets 16384, 65536, 262144"
for r in 1 2; do
  echo "## B r$r"
  timeout 80 bin/after bench --workload tpcc --scale 1/thread --threads 1,16 --table latched,latchfree $B --buckets 16384,65536,262144 --json $o/b-$r.json | grep -E '^(latched|latchfree)'
done
one() { # cell-name exe env...
  local name=$1 exe=$2; shift 2
  local log; log=$(cd dbx && env "$@" timeout 15 "./$exe" "${ARGS[@]}" 2>&1) || true
  echo "$name $(awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
       /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
             n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log")"
}
cells() { # bench
  local bn=$1
  one dbx-NO_WAIT rundb-$bn-NO_WAIT
  one none rundb-$bn-HEIRLOOM HEIRLOOM_INTENTION=0 HEIRLOOM_TABLE=none HEIRLOOM_POLICY=nowait
  for v in before after; do
    local x=rundb-$bn-HEIRLOOM; [ $v = before ] && x=rundb-$bn-HEIRLOOM-before
    for t in latched latchfree; do
      one "$v-$t" $x HEIRLOOM_INTENTION=0 HEIRLOOM_TABLE=$t HEIRLOOM_POLICY=nowait
    done
  done
  for k in 16384 65536 262144; do
    for t in latched latchfree; do
      one "after-$t-b$k" rundb-$bn-HEIRLOOM HEIRLOOM_INTENTION=0 HEIRLOOM_TABLE=$t HEIRLOOM_POLICY=nowait HEIRLOOM_BUCKETS=$k
    done
  done
}
sec "C: DBx1000 TPC-C W=16, 16 threads, no-wait"
ARGS=(-t16 -n16)
for r in 1 2; do echo "## C r$r"; cells TPCC; done
sec "D: DBx1000 YCSB theta 0.9, 16 threads, no-wait"
ARGS=(-t16 -z0.9 -s1048576 -R16 -r0.5 -w0.5)
for r in 1 2; do echo "## D r$r"; cells YCSB; done
sec "E: kit YCSB default mix and TM1, after, default vs 65536 buckets"
timeout 60 bin/after bench --workload ycsb --threads 1,16 --table latched,latchfree --sli off --duration 0.5 --warmup 0.2 | grep -E '^(latched|latchfree)'
timeout 60 bin/after bench --workload ycsb --threads 1,16 --table latched,latchfree --sli off --duration 0.5 --warmup 0.2 --buckets 65536 | grep -E '^(latched|latchfree)'
timeout 60 bin/after bench --workload tm1 --threads 16 --table latched,latchfree-swap --duration 0.5 --warmup 0.2 --buckets 4096,65536 | grep -E '^(latched|latchfree)'
timeout 60 bin/after bench --workload tm1 --threads 16 --table latched,latchfree-swap --duration 0.5 --warmup 0.2 | grep -E '^(latched|latchfree)'
sec done
