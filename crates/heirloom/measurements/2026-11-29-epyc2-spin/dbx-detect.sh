#!/bin/bash
# DBx1000 as shipped (jemalloc, dynamic), heirloom at its default spin: detect against DL_DETECT, YCSB theta 0.9, 2 threads.
export DBX_CPU_FREQ=$(/work/main/kit/dbx/tsc)
dir=${DIR:-/tmp/dbxje}
cfgs=(dbx-DL_DETECT lf-detect ld-detect lf-nowait ld-nowait dbx-NO_WAIT)
one() {
  local c=$1 exe env=(HEIRLOOM_INTENTION=0)
  case $c in
    dbx-*) exe=$dir/rundb-YCSB-${c#dbx-}; env=() ;;
    *) IFS=- read -r tb po <<< "$c"; [ $tb = lf ] && tb=latchfree || tb=latched
       exe=$dir/rundb-YCSB-HEIRLOOM; env+=(HEIRLOOM_TABLE=$tb HEIRLOOM_POLICY=$po) ;;
  esac
  log=$(cd $dir && env "${env[@]}" timeout 60 $exe -t2 -z0.9 -s1048576 -R16 -r0.5 -w0.5 2>&1)
  awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
       /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
             n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log"
}
for r in $(seq 1 ${ROUNDS:-12}); do
  list=("${cfgs[@]}"); [ $((r % 2)) = 0 ] && mapfile -t list < <(printf '%s\n' "${cfgs[@]}" | tac)
  for c in "${list[@]}"; do echo "$r $c $(one $c)"; done
done
