#!/usr/bin/env bash
# Shared and recent shared line writes per transaction by bucket count, 16
# and 2 threads (heirloom bench --sharing; a build with the instrument):
#   CARGO_TARGET_DIR=/tmp/tgt-sharing cargo build --release --features sharing -p heirloom-bench
#   B=/tmp/tgt-sharing/release/heirloom bash sharing.sh > sharing.txt
set -u
B=${B:-target/release/heirloom}
grep -m1 'model name' /proc/cpuinfo; nproc; echo "rtm cpus: $(grep -cw rtm /proc/cpuinfo)"
for th in 16 2; do
    for w in "tpcc --scale 1/thread" "ycsb --profile dbx1000 --policy nowait" "ycsb --scale 1000000" "tm1"; do
        echo "== $th threads: $w"
        # shellcheck disable=SC2086
        $B bench --workload $w --threads $th --table latched,latchfree,latchfree-swap \
            --buckets 256,4096,16384,65536 --sli off --duration 0.5 --warmup 1 --sharing 2>&1 |
            grep -E '^# sharing, ' | sed 's/^# sharing, //; s/ sli=off//; s/ line writes per transaction//'
    done
done
