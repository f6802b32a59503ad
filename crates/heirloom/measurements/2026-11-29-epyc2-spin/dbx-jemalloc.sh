#!/bin/bash
# jemalloc (dynamic, as shipped) against the static kit without it, 2 threads, YCSB theta 0.9.
export DBX_CPU_FREQ=$(/work/main/kit/dbx/tsc)
cfgs=(je:dbx-NO_WAIT je:lf-nowait je:dbx-DL_DETECT je:lf-detect st:dbx-NO_WAIT st:lf-nowait st:dbx-DL_DETECT st:lf-detect)
one() {
  local d=${1%%:*} c=${1#*:} exe env=(HEIRLOOM_INTENTION=0)
  dir=/tmp/dbxje; [ $d = st ] && dir=/work/main/kit/dbx
  case $c in
    dbx-*) exe=$dir/rundb-YCSB-${c#dbx-}; env=() ;;
    *) IFS=- read -r tb po <<< "$c"; exe=$dir/rundb-YCSB-HEIRLOOM; env+=(HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=$po) ;;
  esac
  log=$(cd $dir && env "${env[@]}" timeout 60 $exe -t2 -z0.9 -s1048576 -R16 -r0.5 -w0.5 2>&1)
  awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
       /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
             n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log"
}
for r in $(seq 1 ${ROUNDS:-8}); do
  list=("${cfgs[@]}"); [ $((r % 2)) = 0 ] && mapfile -t list < <(printf '%s\n' "${cfgs[@]}" | tac)
  for c in "${list[@]}"; do echo "$r $c $(one $c)"; done
done
