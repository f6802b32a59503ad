#!/usr/bin/env bash
# DBx1000 (kit/dbx, built at 4f40b2c) on the 2-core VM: the latched table with and without spares, 4 rounds, order reversed every other round.
source <(sed -n '/^dbx_one()/,/^}/p' scripts/scale.sh)
cd kit/dbx
configs=(dbx-NO_WAIT heirloom-latched-nowait heirloom-latchedspares-nowait heirloom-latched-waitdie heirloom-latchedspares-waitdie heirloom-latchfree-nowait)
for r in 1 2 3 4; do
  list=("${configs[@]}"); [ $((r % 2)) = 0 ] && mapfile -t list < <(printf '%s\n' "${configs[@]}" | tac)
  for cell in "tp2 TPCC -t2 -n2" "y9 YCSB -t2 -s1048576 -R16 -r0.5 -w0.5 -z0.9"; do
    read -r name b rest <<< "$cell"
    for c in "${list[@]}"; do echo "$r $name $c $(DNF=60 dbx_one $c $b $rest)"; done
  done
done
