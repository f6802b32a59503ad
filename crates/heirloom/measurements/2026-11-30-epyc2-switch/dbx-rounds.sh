#!/bin/bash
# Inside DBx1000 (YCSB theta 0.9, 2 threads; TPC-C 2 warehouses): heirloom's
# row fast path auto (the default), on and off, beside DBx1000's NO_WAIT and
# DL_DETECT as shipped; ROUNDS interleaved rounds, the order turned every round.
cd /tmp/dbxout; export DBX_CPU_FREQ=$(./tsc)
grep -m1 "model name" /proc/cpuinfo; nproc; grep -cw rtm /proc/cpuinfo
one() { # cell config env...
  local cell=$1 n=$2; shift 2
  local args; if [ $cell = y9 ]; then args="-t2 -z0.9 -s1048576 -R16 -r0.5 -w0.5"; b=YCSB; else args="-t2 -n2"; b=TPCC; fi
  local exe=./rundb-$b-HEIRLOOM; case $n in NO_WAIT|DL_DETECT) exe=./rundb-$b-$n;; esac
  local out; out=$(env "$@" timeout 60 $exe $args 2>&1 | grep -E "summary|SimTime")
  python3 -c "import re,sys; s=sys.argv[2]; t=int(re.search(r'txn_cnt=(\d+)',s).group(1)); a=int(re.search(r'abort_cnt=(\d+)',s).group(1)); r=float(re.search(r'run_time=([\d.]+)',s).group(1)); print(sys.argv[1], round(t/r), round(a/t,3))" "$cell $n" "$out"
}
I="HEIRLOOM_INTENTION=0"
C=("NO_WAIT X=1" "DL_DETECT X=1"
   "lf-nowait-auto $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=nowait"
   "lf-nowait-on $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=nowait HEIRLOOM_FAST_ROWS=1"
   "lf-nowait-off $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=nowait HEIRLOOM_FAST_ROWS=0"
   "lat-nowait-auto $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=nowait"
   "lat-nowait-off $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=nowait HEIRLOOM_FAST_ROWS=0"
   "lf-detect-auto $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=detect"
   "lf-detect-on $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=detect HEIRLOOM_FAST_ROWS=1"
   "lf-detect-off $I HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=detect HEIRLOOM_FAST_ROWS=0"
   "lat-detect-auto $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=detect"
   "lat-detect-off $I HEIRLOOM_TABLE=latched HEIRLOOM_POLICY=detect HEIRLOOM_FAST_ROWS=0")
for r in $(seq 1 ${ROUNDS:-6}); do
  for cell in y9 tp; do
    if [ $((r%2)) = 1 ]; then L=("${C[@]}"); else mapfile -t L < <(printf '%s\n' "${C[@]}" | tac); fi
    for c in "${L[@]}"; do echo "$r $(one $cell $c)"; done
  done
done
