#!/usr/bin/env bash
# Instructions per transaction of the lock manager's uncontended path,
# counted by callgrind (deterministic: the same binary and input give the
# same count whatever else the machine does). Each configuration runs the
# `txnloop` example: a warm-up (1,000,000 transactions for the tm1 loop,
# whose cost settles only after that many, 10,000 for the others), then
# 100,000 measured transactions in the function `measured`, which
# callgrind alone collects (`--toggle-collect`); the count over 100,000 is
# the figure.
#
#   scripts/callgrind.sh                      # the README's table
#   scripts/callgrind.sh "latched on row 0"   # chosen configurations
#
# A configuration is "TABLE SLI LOOP KEEP" (see examples/txnloop.rs); the
# `ycsb` loop (16 row locks without intention locks, as DBx1000 asks for
# them) and the `ro` loop (16 S row locks with them, the kit's read-only
# YCSB) are not in the table: "latched off ycsb 0" counts the first.
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind > /dev/null; then
    echo "callgrind.sh: valgrind is missing (apt-get install valgrind)" >&2
    exit 2
fi
if [ $# -gt 0 ]; then configs=("$@"); else
    configs=("latched off row 0" "latched on row 0" "latchfree off row 0" "latchfree on row 0"
             "global off row 0" "none off row 0"
             "latched off tm1 0" "latched on tm1 0" "latched on tm1 64" "latchfree off tm1 0"
             "latched off db 0" "latchfree off db 0")
fi
cargo build --release --example txnloop -q
bin=${CARGO_TARGET_DIR:-target}/release/examples/txnloop
n=100000
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
        --toggle-collect='txnloop::measured' "$bin" "$1" "$2" "$n" "$3" "$4" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-10s %-4s %-4s %5s %14s\n' table sli loop keep instr/txn
for c in "${configs[@]}"; do
    read -r table sli loop keep <<< "$c"
    a=$(count "$table" "$sli" "$loop" "$keep")
    if [ -z "$a" ] || [ "$a" -eq 0 ]; then
        echo "callgrind.sh: no count for '$c' (is it a valid configuration?)" >&2
        exit 2
    fi
    printf '%-10s %-4s %-4s %5s %14d\n' "$table" "$sli" "$loop" "$keep" $(( a / n ))
done
