#!/usr/bin/env bash
# heirloom inside DBx1000 at 16 threads on 2 cores, told of 16 cores
# (HEIRLOOM_CORES=16: waiters spin before parks, wounds doom at once).
# A run whose threads use no CPU for 10 s is a hang: backtraces, then killed.
cd "${DBX_DIR:?a dbx1000.sh build directory}"
end=$(( $(date +%s) + ${SOAK_S:-2100} ))
log=${LOG:-$PWD/dbx-soak.log}
ticks() { cat /proc/$1/task/*/stat 2>/dev/null | awk '{s += $14 + $15} END {print s + 0}'; }
r=0
while [ "$(date +%s)" -lt "$end" ]; do
  r=$((r+1))
  for b in YCSB TPCC; do
    if [ $b = YCSB ]; then args=(-t16 -z0.9 -s1048576 -R16 -r0.5 -w0.5); else args=(-t16 -n4); fi
    for t in latched latched-spares latchfree; do
      for p in detect waitdie woundwait; do
        [ "$(date +%s)" -lt "$end" ] || break 3
        out=${log%/*}/dbx.$r.$b.$t.$p
        start=$(date +%s)
        HEIRLOOM_INTENTION=0 HEIRLOOM_TABLE=$t HEIRLOOM_POLICY=$p HEIRLOOM_CORES=16 ./rundb-$b-HEIRLOOM "${args[@]}" > $out 2>&1 &
        pid=$!
        verdict=ok; last=$(ticks $pid)
        while kill -0 $pid 2>/dev/null; do
          sleep 10
          kill -0 $pid 2>/dev/null || break
          now=$(ticks $pid)
          if [ $((now - last)) -lt 5 ]; then
            verdict=HANG; gdb -p $pid -batch -ex "thread apply all bt 20" > $out.gdb 2>&1; kill -9 $pid; break
          fi
          last=$now
          if [ $(( $(date +%s) - start )) -gt 600 ]; then verdict=SLOW; kill -9 $pid; break; fi
        done
        wait $pid 2>/dev/null
        grep -q "^PASS" $out || [ $verdict != ok ] || verdict=FAILED
        sim=$(sed -n 's/^PASS! SimTime = //p' $out)
        sum=$(grep '^\[summary\]' $out | sed -E 's/.*txn_cnt=([0-9]+), abort_cnt=([0-9]+).*/\1 \2/')
        echo "$(date +%T) r$r $b $t $p $verdict $(( $(date +%s) - start ))s commits/aborts $sum" >> $log
        [ $verdict = ok ] && rm -f $out
      done
    done
  done
done
echo done >> $log
