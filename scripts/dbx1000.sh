#!/usr/bin/env bash
# Builds DBx1000 (the two-phase-locking testbed of "Staring into the Abyss",
# VLDB 2014; https://github.com/yxymit/DBx1000) in its three 2PL variants and
# runs it with the settings of `heirloom bench --profile dbx1000`, so that the
# two can be measured side by side on one machine.
#
#   scripts/dbx1000.sh build SRC OUT        # SRC: a DBx1000 checkout; 8 binaries in OUT
#   scripts/dbx1000.sh ycsb OUT THREADS [THETA]   # one line per variant: txn/s, aborts/s
#   scripts/dbx1000.sh tpcc OUT THREADS WAREHOUSES
#   scripts/dbx1000.sh rounds OUT N [OUT8]  # N interleaved rounds of everything, then medians
#   scripts/dbx1000.sh summary FILE...      # the same medians of saved `rounds` output, pooled
#   scripts/dbx1000.sh callgrind OUT        # instructions a transaction, one thread (TXNS=20000 builds)
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
# variants lock), with HEIRLOOM_FAST_ROWS=0 it never holds a row S lock on
# the fast path (1: always may, auto or 2: the library's default, the
# switch), with HEIRLOOM_STATS=1 it prints heirloom's statistics
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
# Without jemalloc on the machine the build stops (exit 2) unless
# DBX_MALLOC=glibc asks for glibc's malloc; OUT/malloc says which was linked.
#
# `callgrind` counts, with valgrind's callgrind, the instructions a
# committed transaction costs inside `thread_t::run()` (the load and the
# queries' generation not counted) at one thread, TPC-C with one
# warehouse and YCSB as `ycsb` runs it: DBx1000's NO_WAIT beside heirloom
# inside it, no-wait without intention locks on every table of
# HEIRLOOM_TABLES (default "latchfree latched"), and `none` (the
# interface alone). Deterministic, so two builds compare on any machine;
# callgrind runs some fifty times slower, so build OUT with TXNS=20000.
#
# `rounds` runs every cell (YCSB theta 0.9 and 0.6, TPC-C; 1, 2 and 8
# threads; CELLS="y9 2;tp 1" picks some, W = threads, 2 at 8 threads) in
# every configuration: DBx1000's three variants, heirloom under every
# policy on both tables without intention locks, the latch-free no-wait
# with them, and `none`. A round runs each cell's configurations one after
# another, in an order turned and reversed from round to round; 8-thread
# runs use the binaries in OUT8 if given (a smaller TXNS build: 8 threads
# of 200,000 take half a minute a run) and stop after TIMEOUT8 seconds
# (default 40; DNF), the others after TIMEOUT (default 600). It prints a line a run (round, cell, configuration,
# txn/s, aborted attempts per commit, the share of time in aborted
# attempts), then per cell the median txn/s of every configuration, each
# side's best and heirloom's best over DBx1000's, by the medians and round
# by round (geometric mean and range), and `none` over DBx1000's best.
set -euo pipefail
# The medians of runs in the lines `rounds` prints (any number of files:
# rounds of several runs pool).
summary() {
    python3 - "$@" <<'PY'
import collections, math, re, statistics, sys
names = {"y9": "YCSB theta 0.9", "y6": "YCSB theta 0.6", "tp": "TPC-C pay+new"}
# `tpN`: TPC-C with N warehouses (scripts/scale.sh's cells).
def name(w):
    m = re.fullmatch(r"tp(\d+)", w)
    return names.get(w) or (m and f"TPC-C pay+new, {m.group(1)} warehouses")
runs = collections.defaultdict(dict)  # (cell, threads) -> config -> {(file, round): txn/s or None}
for n, path in enumerate(sys.argv[1:]):
    for line in open(path):
        # A run's line; anything else (an earlier summary) is passed over.
        p = line.split()
        if len(p) < 5 or not p[0].isdigit() or not name(p[1]) or not p[2].isdigit():
            continue
        r, w, t, config, tps = p[:5]
        runs[(w, int(t))].setdefault(config, {})[(n, int(r))] = None if tps == "DNF" else float(tps)
def med(v):  # a run that did not finish counts as slower than any that did
    m = statistics.median([0.0 if x is None else x for x in v.values()]) if v else 0.0
    return m or None
def k(x):
    return "DNF" if x is None else f"{x / 1000:.1f}k"
def order(config):
    return (config == "none", not config.startswith("dbx"), config)
for (w, t), configs in runs.items():
    print(f"\n{name(w)}, {t} threads: median txn/s of {max(len(v) for v in configs.values())} rounds")
    for config, v in sorted(configs.items(), key=lambda e: order(e[0])):
        print(f"  {config:<36} {k(med(v)):>8}")
    def best(prefix, rounds=None):
        c = {n: (med(v) if rounds is None else v.get(rounds)) for n, v in configs.items() if n.startswith(prefix)}
        c = {n: x for n, x in c.items() if x is not None}
        return max(c.items(), key=lambda e: e[1]) if c else (None, None)
    (hn, h), (dn, d), nn = best("heirloom"), best("dbx"), med(configs.get("none", {}))
    if h and d:
        rr = [best("heirloom", r)[1] / best("dbx", r)[1] for r in sorted({r for v in configs.values() for r in v})
              if best("heirloom", r)[1] and best("dbx", r)[1]]
        g = math.exp(sum(map(math.log, rr)) / len(rr))
        print(f"  heirloom best {hn} over DBx1000 best {dn}: {h / d:.2f}x by the medians, "
              f"{g:.2f}x round by round ({min(rr):.2f}-{max(rr):.2f})")
    if nn and d:
        print(f"  none over DBx1000 best: {nn / d:.2f}x" + (f"; heirloom best over none: {h / nn:.2f}x" if h else ""))
PY
}
cmd=${1:-}
case "$cmd" in
build)
    src=$2 out=$3
    txns=${TXNS:-200000}
    mkdir -p "$out"
    # DBx1000 as shipped links jemalloc; its lock entries come from malloc,
    # so the allocator moves its NO_WAIT (the crate's MEASUREMENTS.md,
    # "DBx1000 with jemalloc"). Built without it only when asked
    # (DBX_MALLOC=glibc); the allocator linked is written to OUT/malloc,
    # and `scale.sh run` logs it.
    jemalloc=-ljemalloc malloc=jemalloc
    if ! echo 'int main(){}' | g++ -x c++ - -ljemalloc -o /dev/null 2>/dev/null; then
        if [ "${DBX_MALLOC:-jemalloc}" != glibc ]; then
            echo "dbx1000.sh: jemalloc does not link here: DBx1000 as shipped links it (apt-get install libjemalloc-dev), or DBX_MALLOC=glibc builds with glibc's malloc" >&2
            exit 2
        fi
        jemalloc= malloc=glibc
    fi
    echo "$malloc" > "$out/malloc"
    echo "malloc: $malloc" >&2
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
rounds)
    [ $# -ge 3 ] || { echo "dbx1000.sh: rounds needs OUT and N (and OUT8)" >&2; exit 2; }
    out=$2 n=$3 out8=${4:-$2}
    IFS=";" read -ra cells <<<"${CELLS:-y9 1;y9 2;y6 1;y6 2;tp 1;tp 2;y9 8;y6 8;tp 8}"
    configs=(dbx-NO_WAIT dbx-WAIT_DIE dbx-DL_DETECT)
    for table in latched latchfree; do
        for policy in detect nowait waitdie woundwait; do
            configs+=("heirloom-$table-$policy")
        done
    done
    configs+=(heirloom-latchfree-nowait-intention none)
    one() { # dir bin config args...: "txn/s aborts-per-commit abort-share" or DNF
        local dir=$1 bin=$2 config=$3 limit=${TIMEOUT:-600} log table policy rest
        shift 3
        local env=(HEIRLOOM_INTENTION=0) exe=./rundb-$bin-HEIRLOOM
        case $config in
        dbx-*) env=() exe=./rundb-$bin-${config#dbx-} ;;
        none) env+=(HEIRLOOM_TABLE=none HEIRLOOM_POLICY=nowait) ;;
        heirloom-*)
            IFS=- read -r _ table policy rest <<<"$config"
            env+=(HEIRLOOM_TABLE="$table" HEIRLOOM_POLICY="$policy")
            [ "$rest" = intention ] && env+=(HEIRLOOM_INTENTION=1)
            ;;
        esac
        [ "$1" = -t8 ] && limit=${TIMEOUT8:-40}
        log=$(cd "$dir" && env "${env[@]}" timeout "$limit" "$exe" "$@" 2>&1) || true
        awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
            /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
            END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
                  n = v["txn_cnt"]; printf "%.0f %.3f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n, v["time_abort"] / v["run_time"] }' <<<"$log"
    }
    raw=$(mktemp)
    k=${#configs[@]}
    for r in $(seq "$n"); do
        for cell in "${cells[@]}"; do
            read -r w t <<<"$cell"
            dir=$out
            [ "$t" = 8 ] && dir=$out8
            case $w in
            y9) bin=YCSB args=(-t"$t" -s1048576 -R16 -z0.9 -r0.5 -w0.5) ;;
            y6) bin=YCSB args=(-t"$t" -s1048576 -R16 -z0.6 -r0.5 -w0.5) ;;
            tp) bin=TPCC args=(-t"$t" -n$([ "$t" = 8 ] && echo 2 || echo "$t")) ;;
            *) echo "dbx1000.sh: unknown cell '$w' (y9, y6 or tp)" >&2; exit 2 ;;
            esac
            for i in $(seq 0 $((k - 1))); do
                j=$(((i + 5 * r) % k))
                [ $((r % 2)) = 0 ] && j=$((k - 1 - j))
                echo "$r $w $t ${configs[$j]} $(one "$dir" "$bin" "${configs[$j]}" "${args[@]}")" | tee -a "$raw"
            done
        done
    done
    summary "$raw"
    rm -f "$raw"
    ;;
callgrind)
    [ $# -ge 2 ] || { echo "dbx1000.sh: callgrind needs OUT" >&2; exit 2; }
    command -v valgrind >/dev/null || { echo "dbx1000.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 2; }
    cd "$2"
    printf '%-5s %-20s %14s %10s %9s\n' bench config instructions instr/txn /NO_WAIT
    for bin in TPCC YCSB; do
        if [ "$bin" = YCSB ]; then args=(-t1 -s1048576 -R16 -z0.9 -r0.5 -w0.5); else args=(-t1 -n1); fi
        base=
        for config in NO_WAIT ${HEIRLOOM_TABLES:-latchfree latched} none; do
            env=(HEIRLOOM_INTENTION=0 HEIRLOOM_POLICY=nowait HEIRLOOM_TABLE=$config) exe=./rundb-$bin-HEIRLOOM
            [ "$config" = NO_WAIT ] && env=() exe=./rundb-$bin-NO_WAIT
            [ -x "$exe" ] || continue
            log=$(env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
                --toggle-collect='thread_t::run()' "$exe" "${args[@]}" 2>&1) || true
            n=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$log")
            txn=$(sed -n 's/^\[summary\] txn_cnt=\([0-9]*\),.*/\1/p' <<<"$log")
            if [ -z "$n" ] || [ -z "$txn" ] || [ "$txn" -eq 0 ]; then
                echo "dbx1000.sh: no count for $bin $config" >&2
                exit 1
            fi
            [ "$config" = NO_WAIT ] && base=$n
            awk -v b="$bin" -v c="$config" -v n="$n" -v t="$txn" -v base="$base" \
                'BEGIN { printf "%-5s %-20s %14d %10.0f %9s\n", b, c, n, n / t, base ? sprintf("%.3f", n / base) : "-" }'
        done
    done
    ;;
summary)
    shift
    [ $# -gt 0 ] || { echo "dbx1000.sh: summary needs the files of rounds' lines" >&2; exit 2; }
    summary "$@"
    ;;
*)
    awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
