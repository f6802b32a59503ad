#!/usr/bin/env bash
# Builds DBx1000 (the two-phase-locking testbed of "Staring into the Abyss",
# VLDB 2014; https://github.com/yxymit/DBx1000) in its three 2PL variants and
# runs it with the settings of `heirloom bench --profile dbx1000`, so that the
# two can be measured side by side on one machine.
#
#   scripts/dbx1000.sh build SRC OUT        # SRC: a DBx1000 checkout; 8 binaries in OUT
#   scripts/dbx1000.sh ycsb OUT THREADS [THETA]   # one line per variant: txn/s, aborts/s
#   scripts/dbx1000.sh tpcc OUT THREADS WAREHOUSES
#
# Besides DBx1000's own NO_WAIT, WAIT_DIE and DL_DETECT, `build` makes
# DBx1000 with heirloom as its lock manager (CC_ALG HEIRLOOM: the patch
# scripts/dbx1000-heirloom.patch, linked with heirloom's C interface,
# crates/heirloom-ffi, built here): its row accesses take S or X row locks
# through heirloom (which takes IS or IX on the table and the database
# first, on its fast path), commit and abort release them all; its abort
# buffer and workloads are unchanged. `ycsb` and `tpcc` run it under every
# policy in HEIRLOOM_POLICIES (default "detect nowait waitdie woundwait")
# on every table in HEIRLOOM_TABLES (default "latched latchfree"); with
# HEIRLOOM_ONLY=1 they (and `build`) skip DBx1000's own variants, with
# DBX_ONLY=1 heirloom's. With HEIRLOOM_INTENTION=0 in its environment the
# patched DBx1000 takes the row locks alone (no intention locks, as its own
# variants lock), with HEIRLOOM_STATS=1 it prints heirloom's statistics
# (JSON) after its run. HEIRLOOM_TABLES=none runs it with no locking at
# all (heirloom's `none` table): the engine's ceiling, what any lock
# manager inside it could reach (isolation is then not kept).
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
    # HEIRLOOM_ONLY=1: heirloom's two binaries only (DBx1000's own left as
    # they are); DBX_ONLY=1: DBx1000's own six only.
    own=(NO_WAIT WAIT_DIE DL_DETECT)
    [ "${HEIRLOOM_ONLY:-0}" = 1 ] && own=()
    for wl in YCSB TPCC; do
        for cc in "${own[@]}"; do
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
    [ "${DBX_ONLY:-0}" = 1 ] && exit 0
    # heirloom inside DBx1000: the C interface's static library and header.
    repo=$(cd "$(dirname "$0")/.." && pwd)
    (cd "$repo" && cargo build --release -q -p heirloom-ffi)
    ffi="$out/heirloom-ffi"
    mkdir -p "$ffi/include"
    cp "${CARGO_TARGET_DIR:-$repo/target}/release/libheirloom_ffi.a" "$ffi/"
    cp "$repo/crates/heirloom-ffi/include/heirloom.h" "$ffi/include/"
    for wl in YCSB TPCC; do
        dir="$out/src-$wl-HEIRLOOM"
        rm -rf "$dir"
        cp -r "$src" "$dir"
        patch -d "$dir" -p1 -s < "$repo/scripts/dbx1000-heirloom.patch"
        sed -i -e "s/^#define WORKLOAD .*/#define WORKLOAD $wl/" \
            -e "s/^#define CC_ALG .*/#define CC_ALG HEIRLOOM/" \
            -e "s/^#define MAX_TXN_PER_PART .*/#define MAX_TXN_PER_PART $txns/" \
            -e "s/^#define PERC_PAYMENT .*/#define PERC_PAYMENT 0.5/" \
            -e "s/^#define CPU_FREQ .*/#define CPU_FREQ $ghz/" "$dir/config.h"
        sed -i -e "s/-ljemalloc/$jemalloc/" -e "s| -L./libs||" "$dir/Makefile"
        make -C "$dir" -j2 -s rundb HEIRLOOM_FFI="$ffi" >/dev/null
        cp "$dir/rundb" "$out/rundb-$wl-HEIRLOOM"
        rm -rf "$dir"
    done
    ;;
ycsb | tpcc)
    out=$2 threads=$3
    cd "$out"
    if [ "$cmd" = ycsb ]; then
        bin=YCSB
        args=(-t"$threads" -s1048576 -R16 -z"${4:-0.9}" -r0.5 -w0.5)
    else
        bin=TPCC
        args=(-t"$threads" -n"$4")
    fi
    report() { # label log
        local sim txn abort
        sim=$(sed -n 's/^PASS! SimTime = \([0-9]*\).*/\1/p' <<<"$2")
        txn=$(sed -n 's/^\[summary\] txn_cnt=\([0-9]*\), abort_cnt=\([0-9]*\).*/\1/p' <<<"$2")
        abort=$(sed -n 's/^\[summary\] txn_cnt=\([0-9]*\), abort_cnt=\([0-9]*\).*/\2/p' <<<"$2")
        awk -v cc="$1" -v t="$threads" -v sim="$sim" -v txn="$txn" -v ab="$abort" \
            'BEGIN { printf "dbx1000 %-28s %d threads  %10.0f txn/s  %10.0f aborts/s\n", cc, t, txn / (sim / 1e9), ab / (sim / 1e9) }'
    }
    if [ "${HEIRLOOM_ONLY:-0}" != 1 ]; then
        for cc in NO_WAIT WAIT_DIE DL_DETECT; do
            report "$cc" "$("./rundb-$bin-$cc" "${args[@]}")"
        done
    fi
    if [ "${DBX_ONLY:-0}" != 1 ] && [ -x "./rundb-$bin-HEIRLOOM" ]; then
        for table in ${HEIRLOOM_TABLES:-latched latchfree}; do
            for policy in ${HEIRLOOM_POLICIES:-detect nowait waitdie woundwait}; do
                report "HEIRLOOM-$table-$policy" \
                    "$(HEIRLOOM_TABLE=$table HEIRLOOM_POLICY=$policy "./rundb-$bin-HEIRLOOM" "${args[@]}")"
            done
        done
    fi
    ;;
*)
    sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
