#!/usr/bin/env bash
# Soak the 16-core wait paths on 2 cores (--cores 16, 16 workers) on the
# tables the last soak left out: the global table in both forms, the
# elided latched one (no RTM here: it takes its latches), the server.
cd /tmp/soak
end=$(( $(date +%s) + ${SOAK_S:-2400} ))
i=0
while [ "$(date +%s)" -lt "$end" ]; do
  i=$((i+1))
  case $((i % 3)) in
    0) args=(--workload tpcc --profile dbx1000 --scale 4 --opt shrink=10) ;;
    1) args=(--workload ycsb --profile dbx1000) ;;
    2) args=(--workload tm1) ;;
  esac
  ./heirloom bench "${args[@]}" --threads 16 --cores 16 \
    --table global,global-htm,latched-htm,latched-spares,latchfree-swap --sli off,on \
    --policy detect,nowait,waitdie,woundwait --spin 0,200 \
    --duration 0.3 --warmup 0.05 --stuck-after 10 --verify --seed $i > out.$i 2> err.$i
  rc=$?
  echo "$(date +%T) sweep $i ${args[1]} rc $rc" >> log
  if [ $rc -ne 0 ]; then echo "FAIL $i" >> log; else rm -f out.$i err.$i; fi
done
echo done >> log
