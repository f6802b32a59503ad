#!/usr/bin/env bash
# Soak the 16-core wait paths on 2 cores (--cores 16, 16 workers) with the
# intention locks on, so that the hinted leaf (`Transaction::lock_hinted`)
# runs under every table and policy: TPC-C (4 warehouses, shrunk), TM1,
# and YCSB as DBx1000 runs it, in turn; every run verified.
cd "${SOAK_DIR:-.}"
end=$(( $(date +%s) + ${SOAK_S:-1500} ))
i=0
while [ "$(date +%s)" -lt "$end" ]; do
  i=$((i+1))
  case $((i % 3)) in
    0) args=(--workload tpcc --scale 4 --opt shrink=10) ;;
    1) args=(--workload tm1) ;;
    2) args=(--workload ycsb --profile dbx1000) ;;
  esac
  "${HEIRLOOM:-heirloom}" bench "${args[@]}" --threads 16 --cores 16 \
    --table latched,latched-spares,latchfree,latchfree-swap --sli off,on \
    --policy detect,nowait,waitdie,woundwait \
    --duration 0.3 --warmup 0.1 --stuck-after 10 --verify --seed $i > out.$i 2> err.$i
  rc=$?
  echo "$(date +%T) sweep $i ${args[1]} rc $rc" >> log
  if [ $rc -ne 0 ]; then echo "FAIL $i" >> log; else rm -f out.$i err.$i; fi
done
echo done >> log
