#!/bin/bash
# ABBA rounds: heirloom inside DBx1000, old (dbx91) vs new (dbx91c) binaries
source <(sed -n '/^dbx_one()/,/^}/p' /work/main/scripts/scale.sh)
R=${R:-10}
for r in $(seq 1 $R); do
  for side in $( [ $((r%2)) = 1 ] && echo "old new" || echo "new old"); do
    d=OLD; [ $side = new ] && d=NEW
    for cell in "TPCC -t2 -n2" "YCSB -t2 -z0.9"; do
      for cfg in heirloom-latchfree-nowait none; do
        set -- $cell; b=$1; shift
        out=$(cd $d && DNF=60 dbx_one $cfg $b "$@")
        echo "$r $side $b $cfg $out"
      done
    done
  done
done
