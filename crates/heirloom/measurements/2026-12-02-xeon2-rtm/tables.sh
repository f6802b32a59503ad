#!/usr/bin/env bash
# The lock manager's elided tables beside their latched forms, on a CPU
# with RTM: every workload at 1, 2 and 8 threads, rounds of the whole
# cross product (--repeat), SLI off, defaults otherwise.
#   bash tables.sh OUT_DIR     (from the repository root, after
#                               cargo build --release -p heirloom-bench)
set -euo pipefail
out=${1:?usage: tables.sh OUT_DIR}
bin=${BIN:-target/release/heirloom}
mkdir -p "$out"
grep -m1 'model name' /proc/cpuinfo > "$out/machine.txt"
echo "cores: $(nproc); rtm flags: $(grep -cw rtm /proc/cpuinfo)" >> "$out/machine.txt"
for w in tm1 tpcc ycsb; do
    scale=()
    if [ "$w" = tpcc ]; then scale=(--scale 1/thread); fi
    "$bin" bench --workload "$w" "${scale[@]}" --threads 1,2,8 \
        --table latched,latched-htm,global,global-htm --sli off \
        --duration 1 --warmup 0.3 --repeat 5 --json "$out/$w.json" > "$out/$w.txt"
done
