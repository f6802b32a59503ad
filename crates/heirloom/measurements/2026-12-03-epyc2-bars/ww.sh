#!/bin/bash
# Wound-wait at 32 threads on 2 cores, YCSB as DBx1000 runs it: 18a38ac
# against the tip, six interleaved pairs of 1.5-s runs (ww.txt).
for i in 1 2 3 4 5 6; do for b in 18a38ac head; do
  /tmp/heirloom-$b bench --workload ycsb --profile dbx1000 --table latched,latchfree --policy woundwait \
    --threads 32 --duration 1.5 --warmup 0.3 --sli off --seed $i --json /tmp/ww-$b-$i.json > /dev/null 2>&1
done; done
python3 -c "
import json,statistics as st
for tab in ['latched','latchfree']:
  for b in ['18a38ac','head']:
    t=[];w=[]
    for i in range(1,7):
      for r in json.load(open(f'/tmp/ww-{b}-{i}.json'))['runs']:
        if r['table']==tab: t.append(r['tps']); w.append(r['abort_causes']['wounded']/r['committed'])
    print(tab,b,'tps',[round(x/1000) for x in t],'median',round(st.median(t)/1000,1),'k  wounded/commit median',round(st.median(w),2))
"
