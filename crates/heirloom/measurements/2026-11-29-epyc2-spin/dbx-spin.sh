#!/bin/bash
# 2-core A/B inside DBx1000: spin 50 vs 200, interleaved rounds, order reversed each round.
cd /work/main/kit/dbx
export DBX_CPU_FREQ=$(./tsc)
cfgs=(dbx-DL_DETECT dbx-NO_WAIT dbx-WAIT_DIE lf-detect-50 lf-detect-200 lf-nowait-50 lf-waitdie-50 lf-waitdie-200 lf-woundwait-50 lf-woundwait-200 ld-detect-50 ld-detect-200 ld-waitdie-50 ld-waitdie-200)
one() {
  local c=$1 exe env=(HEIRLOOM_INTENTION=0)
  case $c in
    dbx-*) exe=./rundb-YCSB-${c#dbx-}; env=() ;;
    *) IFS=- read -r tb po sp <<< "$c"; exe=./rundb-YCSB-HEIRLOOM
       [ $tb = lf ] && tb=latchfree || tb=latched
       env+=(HEIRLOOM_TABLE=$tb HEIRLOOM_POLICY=$po HEIRLOOM_SPIN_US=$sp) ;;
  esac
  log=$(env "${env[@]}" timeout 60 $exe -t2 -z0.9 -s1048576 -R16 -r0.5 -w0.5 2>&1)
  awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
       /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
             n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log"
}
for r in $(seq 1 ${ROUNDS:-10}); do
  list=("${cfgs[@]}"); [ $((r % 2)) = 0 ] && mapfile -t list < <(printf '%s\n' "${cfgs[@]}" | tac)
  for c in "${list[@]}"; do echo "$r $c $(one $c)"; done
done
