#!/bin/bash
# usage: cgdbx91.sh DIR TAG  -> instr totals for HEIRLOOM latchfree nowait (no intention) and none, TPCC -t1 -n1
d=$1; tag=$2
cd $d
for cfg in latchfree none; do
  pol=nowait
  env HEIRLOOM_INTENTION=0 HEIRLOOM_TABLE=$cfg HEIRLOOM_POLICY=$pol valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=thread_t::run()' --callgrind-out-file=/tmp/cg-$tag-$cfg.out ./rundb-TPCC-HEIRLOOM -t1 -n1 > /tmp/cg-$tag-$cfg.log 2>&1
  echo "$tag $cfg $(grep -o 'Collected : [0-9]*' /tmp/cg-$tag-$cfg.log)"
done
