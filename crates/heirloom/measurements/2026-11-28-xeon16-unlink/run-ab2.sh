#!/bin/bash
# 16-core check of the latch-free owner unlink: 3d75b83 (bin/heirloom-before,
# dbx/*-HEIRLOOM-before) against 141be10 (bin/heirloom, dbx/*-HEIRLOOM),
# interleaved. The latched table's code is the same in both: its ratio is
# the runs' noise.
cd "$(dirname "$0")"
o=${OUT:-/tmp/out}; mkdir -p $o
exec > >(tee -a $o/log.txt) 2>&1
sec() { echo; echo "=== $* (${SECONDS}s)"; }
sec machine
nproc; grep -m1 'model name' /proc/cpuinfo; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
lscpu | grep -iE 'socket|core|thread|numa|mhz|L2|L3' | head -10
ghz=$(dbx/tsc 2>/dev/null || echo 2.1); echo "TSC GHz: $ghz"; export DBX_CPU_FREQ=$ghz
B="--duration 0.5 --warmup 0.2 --sli off"
sec "TPC-C 16 threads, before/after, 4 rounds ABBA"
for r in 1 2 3 4; do
  order="heirloom-before heirloom"; [ $((r % 2)) = 0 ] && order="heirloom heirloom-before"
  for b in $order; do
    echo "## round $r $b tpcc16"
    timeout 40 bin/$b bench --workload tpcc --scale 1/thread --threads 16 --table latched,latchfree,latchfree-swap $B --breakdown --json $o/tpcc16-$b-$r.json | grep -E '^(latched|latchfree)|manager'
  done
done
sec "TPC-C 1 thread, before/after, 2 rounds ABBA"
for r in 1 2; do
  for b in heirloom-before heirloom heirloom heirloom-before; do
    echo "## round $r $b tpcc1"
    timeout 30 bin/$b bench --workload tpcc --scale 1/thread --threads 1 --table latched,latchfree $B --breakdown | grep -E '^(latched|latchfree)|manager'
  done
done
dbx() {
  local c=$1 b=$2; shift 2
  local env=(HEIRLOOM_INTENTION=0) exe=./rundb-$b-HEIRLOOM log
  case $c in
    dbx-*) env=(); exe=./rundb-$b-${c#dbx-} ;;
    none) env+=(HEIRLOOM_TABLE=none HEIRLOOM_POLICY=nowait) ;;
    *-before) exe=$exe-before; env+=(HEIRLOOM_TABLE=${c%-before} HEIRLOOM_POLICY=nowait) ;;
    *) env+=(HEIRLOOM_TABLE=$c HEIRLOOM_POLICY=nowait) ;;
  esac
  log=$(cd dbx && env "${env[@]}" timeout 15 "$exe" "$@" 2>&1) || true
  awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
       /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
             n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log"
}
sec "DBx1000 at 16 threads, no-wait, before/after, 3 rounds"
cfg=(dbx-NO_WAIT latchfree-before latchfree latched none)
for r in 1 2 3; do
  for cell in "tp16 TPCC -n16" "y9 YCSB -z0.9"; do
    read -r w b a <<< "$cell"
    args=(-t16 "$a"); [ "$b" = YCSB ] && args+=(-s1048576 -R16 -r0.5 -w0.5)
    list=("${cfg[@]}"); [ $((r % 2)) = 0 ] && mapfile -t list < <(printf '%s\n' "${cfg[@]}" | tac)
    for c in "${list[@]}"; do echo "$r $w 16 $c $(dbx $c $b "${args[@]}")" | tee -a $o/dbx.txt; done
  done
done
sec done
