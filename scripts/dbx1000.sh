#!/usr/bin/env bash
# Builds DBx1000 (the two-phase-locking testbed of "Staring into the Abyss",
# VLDB 2014; https://github.com/yxymit/DBx1000) in its three 2PL variants and
# runs it with the settings of `heirloom bench --profile dbx1000`, so that the
# two can be measured side by side on one machine.
#
#   scripts/dbx1000.sh build SRC OUT        # SRC: a DBx1000 checkout; 6 binaries in OUT
#   scripts/dbx1000.sh ycsb OUT THREADS     # one line per variant: txn/s, aborts/s
#   scripts/dbx1000.sh tpcc OUT THREADS WAREHOUSES
#
# Settings (DBx1000's own defaults unless said): YCSB 1M rows (-s1048576),
# 16 requests (-R16), theta 0.9, half reads and half writes, hash index;
# TPC-C payment + new-order 50/50 (PERC_PAYMENT 0.5), thread i on warehouse
# i % W + 1. Each thread runs TXNS transactions (default 200000; compile
# time, MAX_TXN_PER_PART), after generating its queries (not timed).
# Throughput is committed transactions over the wall time of the run
# (DBx1000's `SimTime`); aborts/s counts aborted attempts the same way.
# Without jemalloc on the machine the build links glibc's malloc.
set -euo pipefail
cmd=${1:-}
case "$cmd" in
build)
    src=$2 out=$3
    txns=${TXNS:-200000}
    mkdir -p "$out"
    jemalloc=-ljemalloc
    if ! echo 'int main(){}' | g++ -x c++ - -ljemalloc -o /dev/null 2>/dev/null; then
        jemalloc=
    fi
    # DBx1000 turns rdtsc ticks into ns with CPU_FREQ (GHz, default 2):
    # measure the time-stamp counter's rate here instead of trusting it.
    cat >"$out/tsc.cpp" <<'EOF'
#include <chrono>
#include <cstdio>
#include <thread>
#include <x86intrin.h>
int main() {
    auto t0 = std::chrono::steady_clock::now();
    unsigned long long c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    unsigned long long c1 = __rdtsc();
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%.4f\n", (c1 - c0) / ns);
}
EOF
    g++ -O2 -o "$out/tsc" "$out/tsc.cpp"
    ghz=$("$out/tsc")
    # It reads its schemas from ./benchmarks/ at run time.
    mkdir -p "$out/benchmarks"
    cp "$src"/benchmarks/*.txt "$out/benchmarks/"
    echo "time-stamp counter: $ghz GHz" >&2
    for wl in YCSB TPCC; do
        for cc in NO_WAIT WAIT_DIE DL_DETECT; do
            dir="$out/src-$wl-$cc"
            rm -rf "$dir"
            cp -r "$src" "$dir"
            sed -i -e "s/^#define WORKLOAD .*/#define WORKLOAD $wl/" \
                -e "s/^#define CC_ALG .*/#define CC_ALG $cc/" \
                -e "s/^#define MAX_TXN_PER_PART .*/#define MAX_TXN_PER_PART $txns/" \
                -e "s/^#define PERC_PAYMENT .*/#define PERC_PAYMENT 0.5/" \
                -e "s/^#define CPU_FREQ .*/#define CPU_FREQ $ghz/" "$dir/config.h"
            # The bundled libs/libjemalloc.a is not position-independent
            # (its link fails on PIE toolchains): link the system's.
            sed -i -e "s/-ljemalloc/$jemalloc/" -e "s| -L./libs||" "$dir/Makefile"
            make -C "$dir" -j2 -s rundb >/dev/null
            cp "$dir/rundb" "$out/rundb-$wl-$cc"
            rm -rf "$dir"
        done
    done
    ;;
ycsb | tpcc)
    out=$2 threads=$3
    cd "$out"
    if [ "$cmd" = ycsb ]; then
        bin=YCSB
        args=(-t"$threads" -s1048576 -R16 -z0.9 -r0.5 -w0.5)
    else
        bin=TPCC
        args=(-t"$threads" -n"$4")
    fi
    for cc in NO_WAIT WAIT_DIE DL_DETECT; do
        log=$("./rundb-$bin-$cc" "${args[@]}")
        sim=$(sed -n 's/^PASS! SimTime = \([0-9]*\).*/\1/p' <<<"$log")
        txn=$(sed -n 's/^\[summary\] txn_cnt=\([0-9]*\), abort_cnt=\([0-9]*\).*/\1/p' <<<"$log")
        abort=$(sed -n 's/^\[summary\] txn_cnt=\([0-9]*\), abort_cnt=\([0-9]*\).*/\2/p' <<<"$log")
        awk -v cc="$cc" -v t="$threads" -v sim="$sim" -v txn="$txn" -v ab="$abort" \
            'BEGIN { printf "dbx1000 %-9s %d threads  %10.0f txn/s  %10.0f aborts/s\n", cc, t, txn / (sim / 1e9), ab / (sim / 1e9) }'
    done
    ;;
*)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
