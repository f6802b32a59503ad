#!/bin/bash
# Paired rounds, the order reversed every other round: heirloom inside
# DBx1000, the OLD build's binaries against the NEW one's (both
# `scripts/dbx1000.sh build` outputs). Run from the repository's root:
#   OLD=dir NEW=dir R=10 bash crates/heirloom/measurements/2026-12-01-epyc2-ffi-inline/rounds.sh
# (dbx-rounds-1thr.txt: the same with "TPCC -t1 -n1" and "YCSB -t1 -z0.9")
source <(sed -n '/^dbx_one()/,/^}/p' scripts/scale.sh)
R=${R:-10}
for r in $(seq 1 $R); do
  for side in $( [ $((r%2)) = 1 ] && echo "old new" || echo "new old"); do
    d=$OLD; [ $side = new ] && d=$NEW
    for cell in "TPCC -t2 -n2" "YCSB -t2 -z0.9"; do
      for cfg in heirloom-latchfree-nowait none; do
        set -- $cell; b=$1; shift
        out=$(cd $d && DNF=60 dbx_one $cfg $b "$@")
        echo "$r $side $b $cfg $out"
      done
    done
  done
done
