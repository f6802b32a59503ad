#!/usr/bin/env bash
# Soak the 16-core wait paths on 2 cores with the row side forced on: --cores 16, 16 workers, --fast-rows on.
cd "${SOAK_DIR:-.}"
end=$(( $(date +%s) + ${SOAK_S:-2400} ))
i=0
while [ "$(date +%s)" -lt "$end" ]; do
  i=$((i+1))
  if [ $((i % 3)) -eq 0 ]; then
    args=(--workload tpcc --profile dbx1000 --scale 4 --opt shrink=10)
  else
    args=(--workload ycsb --profile dbx1000)
  fi
  "${HEIRLOOM:-heirloom}" bench "${args[@]}" --threads 16 --cores 16 \
    --table latched,latched-spares,latchfree,latchfree-swap --sli off --fast-rows on \
    --policy detect,nowait,waitdie,woundwait --spin 0,200 \
    --duration 0.5 --warmup 0.1 --stuck-after 10 --verify --seed $i > out.$i 2> err.$i
  rc=$?
  echo "$(date +%T) sweep $i ${args[1]} rc $rc" >> log
  if [ $rc -ne 0 ]; then echo "FAIL $i" >> log; else rm -f out.$i err.$i; fi
done
echo done >> log
