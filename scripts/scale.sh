#!/usr/bin/env bash
# The many-core measurement in one command: build a kit of static binaries
# here, carry it to the many-core machine, run it there.
#
#   scripts/scale.sh build DBX [KIT]   # KIT (default kit/, ignored by git): static
#                                      # binaries, DBx1000 side by side, this script;
#                                      # and KIT.tgz, the same packed (carry that)
#   scripts/scale.sh run [KIT]         # the measurement, at most RUN_BUDGET seconds
#                                      # (default 470); files to $OUT (else /tmp/scale-out)
#   scripts/scale.sh dry [KIT]         # the same on a small machine: T=1,2 TT=2, short
#   scripts/scale.sh wait [KIT]        # the wait rule alone (spins SPINS, every policy,
#                                      # kit and inside DBx1000; at most 250 s)
#   scripts/scale.sh ab [KIT]          # before (BEFORE=REV at build) against after,
#                                      # interleaved, at TT threads; at most 300 s
#   scripts/scale.sh rows [KIT]        # row S fast holds on against off at TT
#                                      # threads, kit and inside DBx1000; at most 250 s
#
# DBX is DBx1000 (https://github.com/yxymit/DBx1000): a checkout, or a git
# directory (a bare mirror), from which commit DBX_COMMIT (default 5f172a9)
# is taken. `build` makes, with RUSTFLAGS="-C target-feature=+crt-static"
# so that they run on a machine with another distribution: bin/heirloom
# (the kit), bin/index (the index bench), bin/t-rtm and bin/t-btree (the
# RTM and B+tree test binaries, for a machine with RTM); and DBx1000's
# three 2PL variants and CC_ALG HEIRLOOM (scripts/dbx1000.sh build, TXNS
# transactions a thread, default 50000) linked -static through a g++
# wrapper, their clock divisor read at run time from DBX_CPU_FREQ (the run
# measures the TSC with dbx/tsc). jemalloc: `apt-get install
# libjemalloc-dev` (without it the build stops, unless DBX_MALLOC=glibc
# asks for glibc's malloc; dbx/malloc records which). About 42 MiB, 57
# with BEFORE's binaries; packed (KIT.tgz) about 18 (24 with them).
#
# `run` measures, each section time-boxed (T: the thread counts of the
# scaling runs, default 1,2,4,8,16; TT: the thread count of the DBx1000
# cells, default 16; DUR: seconds a run, default 0.5):
#   1. the machine: CPU model, cores, sockets, RTM, the TSC rate, DBx1000's
#      allocator;
#   2. TM1 over T on Shore-MT's configuration (latched, no fast path, no
#      SLI), the SLI paper's (latched + SLI), the fast path (latched and
#      latch-free swap), with lock-table operations per transaction;
#   3. read-only YCSB, 1M rows, theta 0 and 0.9, over T on the latched,
#      latch-free and latch-free swap tables, row S fast holds on and off,
#      against `none` (the "of none" column);
#   4. TPC-C, one warehouse a thread, at 1 and the largest of T threads,
#      on the latched table, the latched table with spare heads
#      (latched-spares) and the latch-free table, row S fast holds auto
#      and off (auto is the default: the kit's TPC-C, which locks its
#      inserted rows X, turns the row side off after its first windows;
#      the JSON's `rows` says which state each run ended in), with
#      --breakdown (the lock manager's share of worker time, on the
#      default path: the request classes are --classes) and, where the machine lets a process count
#      its threads, --counters (instructions and cycles a transaction); then, with the sharing instrument
#      (bin/heirloom-sharing), TPC-C and YCSB as DBx1000 runs it at TT
#      threads, latched (TPC-C: and latched-spares) and latch-free, 4,096
#      and 65,536 buckets:
#      shared and recent line writes a transaction on real cores, beside
#      the counts of a 2-core machine;
#   5. waiting at TT threads in the kit: YCSB as DBx1000 runs it
#      (--profile dbx1000) on the latched and latch-free tables under the
#      four policies with --breakdown, then detect, wound-wait and
#      wait-die with the spin before parking at 0 and 500 us, on that YCSB
#      and on TPC-C with 4 warehouses (data for the wait rule), and detect
#      with DL_DETECT's 1 ms bound on a wait (--lock-timeout 1);
#   6. DBx1000 at TT threads, TPC-C with TT and 4 warehouses and YCSB theta
#      0.9: its NO_WAIT, WAIT_DIE and DL_DETECT, heirloom inside it with its
#      defaults under its four policies on the latched and latch-free tables
#      (no intention locks, as DBx1000 locks), the latch-free detect with
#      DL_DETECT's 1 ms bound on a wait (detect-lt), the latch-free no-wait
#      with 4,096 buckets, the latched table with spare heads at its
#      default size, by the cores like the latch-free tables'
#      (latchedspares-nowait, HEIRLOOM_TABLE=latched-spares), and `none`; two rounds, the
#      order reversed in the second (one line a run: round, cell, threads,
#      configuration, txn/s, aborted attempts per commit);
#   7. where the CPU has RTM: the RTM and B+tree tests, the index bench's
#      elided rows and `heirloom figures --only tsx-index`.
# Files in $OUT: log.txt (everything printed), dbx.txt (scripts/dbx1000.sh
# summary reads it), and json.tgz: tm1.json, ycsb-ro-0.json,
# ycsb-ro-0.9.json, tpcc.json, sharing-tpcc.json, sharing-ycsb.json, wait.json, wait-spin.json, wait-lt.json,
# wait-spin-tpcc.json, and on RTM machines index.json and tsx-index/ (one
# archive, as the many-core machine returns at most eight files).
# Every `heirloom bench` run of the kit's own build is told `--stuck-after 5`:
# a run whose workers have not finished 5 s after its measured interval
# prints the lock table's requests and every agent's wait into log.txt and
# exits 1, well inside its section's bound (`timeout`), which would cut the
# report off.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() {
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

build() {
    local src=${1:-}; local kit=${2:-kit}
    # Kit paths are the caller's; the build runs at the project's root.
    mkdir -p "$kit"
    kit=$(cd "$kit" && pwd)
    src=$(cd "$src" 2> /dev/null && pwd || echo "$src")
    cd "$here/.."
    [ -n "$src" ] || { echo "scale.sh build: which DBx1000? (a checkout or a git directory)" >&2; exit 2; }
    [ -d "$src" ] || { echo "scale.sh build: $src is not a directory" >&2; exit 2; }
    mkdir -p "$kit/bin" "$kit/dbx"
    local t=x86_64-unknown-linux-gnu tgt=${CARGO_TARGET_DIR:-target}/static
    local flags="-C target-feature=+crt-static"
    CARGO_TARGET_DIR=$tgt RUSTFLAGS=$flags cargo build --release --target $t -p heirloom-bench
    cp "$tgt/$t/release/heirloom" "$kit/bin/"
    # The kit with the sharing instrument (`--sharing`), in a target of its
    # own so that the plain build's artifacts stay.
    CARGO_TARGET_DIR=$tgt-sharing RUSTFLAGS=$flags cargo build --release --target $t -p heirloom-bench --features sharing
    cp "$tgt-sharing/$t/release/heirloom" "$kit/bin/heirloom-sharing"
    # Test and bench binaries: the last executable cargo names.
    exe() { grep -oE '\(([^)]*/deps/[^)]+)\)' | tr -d '()' | tail -1; }
    CARGO_TARGET_DIR=$tgt RUSTFLAGS=$flags cargo bench --no-run -p heirloom-btree --bench index --target $t 2>&1 | exe \
        | xargs -I{} cp {} "$kit/bin/index"
    CARGO_TARGET_DIR=$tgt RUSTFLAGS=$flags cargo test --release --no-run -p heirloom-rtm --lib --target $t 2>&1 | exe \
        | xargs -I{} cp {} "$kit/bin/t-rtm"
    CARGO_TARGET_DIR=$tgt RUSTFLAGS=$flags cargo test --release --no-run -p heirloom-btree --lib --target $t 2>&1 | exe \
        | xargs -I{} cp {} "$kit/bin/t-btree"
    # DBx1000 at DBX_COMMIT, its clock divisor read at run time, linked static.
    local d; d=$(mktemp -d)
    if [ -d "$src/.git" ] || [ ! -d "$src/system" ]; then
        git --git-dir="$( [ -d "$src/.git" ] && echo "$src/.git" || echo "$src")" archive "${DBX_COMMIT:-5f172a9}" \
            | { mkdir -p "$d/src" && tar -x -C "$d/src"; }
    else
        cp -r "$src" "$d/src"
    fi
    sed -i 's|(double)ret / CPU_FREQ|(double)ret / g_dbx_cpu_freq|' "$d/src/system/helper.h" "$d/src/system/helper.cpp"
    sed -i 's|^extern timespec \* res;|#include <stdlib.h>\nextern double g_dbx_cpu_freq; // GHz: DBX_CPU_FREQ, else CPU_FREQ\nextern timespec * res;|' \
        "$d/src/system/helper.h"
    sed -i '0,/#include "helper.h"/s||#include "helper.h"\ndouble g_dbx_cpu_freq = getenv("DBX_CPU_FREQ") ? atof(getenv("DBX_CPU_FREQ")) : CPU_FREQ;|' \
        "$d/src/system/helper.cpp"
    mkdir -p "$d/gxx"
    printf '#!/bin/bash\nfor a in "$@"; do [ "$a" = -c ] && exec /usr/bin/g++ "$@"; done\nexec /usr/bin/g++ "$@" -static\n' > "$d/gxx/g++"
    chmod +x "$d/gxx/g++"
    PATH="$d/gxx:$PATH" TXNS=${TXNS:-50000} bash scripts/dbx1000.sh build "$d/src" "$kit/dbx"
    # BEFORE=REV: the kit and heirloom's DBx1000 binaries of that commit
    # beside these (bin/heirloom-before, dbx/rundb-*-HEIRLOOM-before), for
    # `scale.sh ab`; built from a worktree with that commit's own scripts.
    if [ -n "${BEFORE:-}" ]; then
        local wt="$d/before-tree" tb=$tgt-before
        [[ $tb == /* ]] || tb=$PWD/$tb
        git worktree add -f --detach "$wt" "$BEFORE" > /dev/null
        CARGO_TARGET_DIR=$tb RUSTFLAGS=$flags cargo build --release --target $t -p heirloom-bench \
            --manifest-path "$wt/Cargo.toml"
        cp "$tb/$t/release/heirloom" "$kit/bin/heirloom-before"
        (cd "$wt" && PATH="$d/gxx:$PATH" TXNS=${TXNS:-50000} HEIRLOOM_ONLY=1 bash scripts/dbx1000.sh build "$d/src" "$d/before")
        local b
        for b in TPCC YCSB; do cp "$d/before/rundb-$b-HEIRLOOM" "$kit/dbx/rundb-$b-HEIRLOOM-before"; done
        git worktree remove --force "$wt"
    fi
    rm -rf "$kit/dbx/heirloom-ffi" "$kit/dbx/tsc.cpp" "$d"
    strip "$kit"/bin/* "$kit"/dbx/rundb-* "$kit/dbx/tsc"
    cp scripts/scale.sh scripts/dbx1000.sh "$kit/"
    # The kit packed: what travels to the many-core machine (the working
    # tree and the carried paths) must stay within 64 MiB, and the kit
    # unpacked, with BEFORE's binaries, comes to about that alone. `run`
    # and the other steps unpack KIT.tgz where KIT is missing or older (gzip, which
    # the run's json.tgz already needs there).
    tar -C "$(dirname "$kit")" -czf "$kit.tgz" "$(basename "$kit")"
    du -sh "$kit" "$kit.tgz"
    echo "carry $(basename "$kit").tgz rather than $(basename "$kit")/: it travels in less than half the room"
}

# One DBx1000 run: configuration, binary suffix, DBx1000's arguments.
dbx_one() {
    local c=$1 b=$2; shift 2
    local env=(HEIRLOOM_INTENTION=0) exe=./rundb-$b-HEIRLOOM log
    case $c in
        dbx-*) env=() exe=./rundb-$b-${c#dbx-} ;;
        none) env+=(HEIRLOOM_TABLE=none HEIRLOOM_POLICY=nowait) ;;
        # The latch-free table, no-wait, with N buckets (the default is
        # heirloom::default_latchfree_buckets of the cores).
        *-buckets[0-9]*) env+=(HEIRLOOM_TABLE=latchfree HEIRLOOM_POLICY=nowait HEIRLOOM_BUCKETS=${c##*-buckets}) ;;
        *)
            local _ tb po rest
            IFS=- read -r _ tb po rest <<< "$c"
            # (A dash in a table's name would split it: latchedspares.)
            [ "$tb" = latchedspares ] && tb=latched-spares
            env+=(HEIRLOOM_TABLE=$tb HEIRLOOM_POLICY=$po)
            [ "$rest" = intention ] && env+=(HEIRLOOM_INTENTION=1)
            # DL_DETECT's bound on a wait (its TIMEOUT, 1 ms).
            [ "$rest" = lt ] && env+=(HEIRLOOM_LOCK_TIMEOUT_US=1000)
            # The spin before a park, in us (the library's default without).
            [[ "$rest" == spin* ]] && env+=(HEIRLOOM_SPIN_US=${rest#spin})
            # The BEFORE commit's build (`scale.sh ab`).
            [ "$rest" = before ] && exe=$exe-before
            # Row S fast holds off, or always on (`scale.sh rows`; without
            # either, the library's default, auto).
            [ "$rest" = rowsoff ] && env+=(HEIRLOOM_FAST_ROWS=0)
            [ "$rest" = rowson ] && env+=(HEIRLOOM_FAST_ROWS=1)
            ;;
    esac
    log=$(env "${env[@]}" timeout "${DNF:-15}" "$exe" "$@" 2>&1) || true
    awk '/^PASS! SimTime/ { split($0, a, "= "); sim = a[2] + 0 }
         /^\[summary\]/ { gsub(/,/, ""); for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
         END { if (!sim || !v["txn_cnt"]) { print "DNF"; exit }
               n = v["txn_cnt"]; printf "%.0f %.3f\n", n / (sim / 1e9), v["abort_cnt"] / n }' <<< "$log"
}

# Two rounds of DBx1000 runs at TT threads into FILE, the second in reverse
# order, until RUN_BUDGET: CELLS is "name binary argument" triples joined
# by ';', then the configurations (dbx_one's).
dbx_rounds() {
    local file=$1 cells=$2; shift 2
    local configs=("$@")
    (
        cd dbx
        local r cell
        for r in 1 2; do
            local IFS=';'
            for cell in $cells; do
                local IFS=$' \t\n' w b a args list c
                read -r w b a <<< "$cell"
                args=("-t$TT" "$a")
                [ "$b" = YCSB ] && args+=(-s1048576 -R16 -r0.5 -w0.5)
                list=("${configs[@]}")
                [ $r = 2 ] && mapfile -t list < <(printf '%s\n' "${configs[@]}" | tac)
                for c in "${list[@]}"; do
                    [ $SECONDS -gt "${RUN_BUDGET:-470}" ] && { echo "budget reached"; exit 0; }
                    echo "$r $w $TT $c $(dbx_one "$c" "$b" "${args[@]}")" | tee -a "$file"
                done
            done
        done
    )
}

# The machine: cores, RTM, the TSC rate (exported as DBX_CPU_FREQ).
machine() {
    sec machine
    nproc
    grep -m1 'model name' /proc/cpuinfo || true
    lscpu | grep -iE 'socket|core|thread|numa|mhz|cache' | head -12 || true
    rtm=$(grep -cw rtm /proc/cpuinfo || true)
    echo "cpus with the rtm flag: $rtm"
    local ghz; ghz=$(dbx/tsc 2>/dev/null || echo 2.1)
    echo "TSC GHz: $ghz"
    echo "DBx1000's malloc: $(cat dbx/malloc 2>/dev/null || echo 'not recorded (a kit built before dbx/malloc)')"
    export DBX_CPU_FREQ=$ghz
}

sec() { echo; echo "=== $* ($(date +%T), ${SECONDS}s)"; }

# The start of a measurement WHAT from KIT: the kit checked for NEED, $out
# made (OUT, else /tmp/scale-out), the kit's directory entered, everything
# printed copied to $out/log.txt, and the machine described.
begin() {
    local what=$1 kit=$2 need=$3 how=${4:-}
    # The packed kit, where KIT is missing or older than it (a machine kept
    # between calls may hold an earlier kit unpacked).
    if [ -f "$kit.tgz" ] && { [ ! -e "$kit/$need" ] || [ "$kit.tgz" -nt "$kit/$need" ]; }; then
        tar -C "$(dirname "$kit")" -xzf "$kit.tgz"
        touch "$kit/$need"
    fi
    [ -x "$kit/$need" ] || { echo "scale.sh $what: no $need in $kit (${how}scripts/scale.sh build DBX $kit first)" >&2; exit 2; }
    out=${OUT:-/tmp/scale-out}
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    cd "$kit"
    exec > >(tee -a "$out/log.txt") 2>&1
    machine
}

# The wait rule's measurement alone (`scale.sh wait`): the spin before a
# park at SPINS (us, default 50,200,500) at TT threads, every policy, in
# the kit on YCSB as DBx1000 runs it and on TPC-C with 4 warehouses, and
# inside DBx1000 (YCSB theta 0.9, TPC-C with 4 warehouses) against its
# NO_WAIT, WAIT_DIE and DL_DETECT; RUN_BUDGET default 250 s.
wait_rule() {
    local TT=${TT:-16} DUR=${DUR:-0.5} H=bin/heirloom SPINS=${SPINS:-50,200,500} rtm out
    RUN_BUDGET=${RUN_BUDGET:-250}
    begin wait "${1:-kit}" bin/heirloom
    sec "the spin before a park at $TT threads, YCSB as DBx1000 runs it: spin $SPINS us, two rounds"
    timeout 90 $H bench --stuck-after 5 --workload ycsb --profile dbx1000 --threads "$TT" --table latched,latchfree --sli off \
        --policy nowait,waitdie,woundwait,detect --spin "$SPINS" --repeat 2 --duration "$DUR" --warmup 0.2 \
        --json "$out/wait-rule-ycsb.json" | tail -60 || echo "spin, YCSB: timed out"
    sec "the spin before a park at $TT threads, TPC-C with 4 warehouses: spin $SPINS us"
    timeout 60 $H bench --stuck-after 5 --workload tpcc --profile dbx1000 --scale 4 --threads "$TT" --table latched,latchfree --sli off \
        --policy nowait,waitdie,woundwait,detect --spin "$SPINS" --duration "$DUR" --warmup 0.2 \
        --json "$out/wait-rule-tpcc.json" | tail -40 || echo "spin, TPC-C: timed out"
    sec "inside DBx1000 at $TT threads: the latch-free table's policies at spin $SPINS us"
    local configs=(dbx-NO_WAIT dbx-WAIT_DIE dbx-DL_DETECT heirloom-latchfree-nowait) s p
    for s in ${SPINS//,/ }; do
        for p in waitdie woundwait detect; do configs+=("heirloom-latchfree-$p-spin$s"); done
    done
    dbx_rounds "$out/dbx-wait.txt" "tp4 TPCC -n4;y9 YCSB -z0.9" "${configs[@]}"
    bash "$here/scale.sh" summary "$out/dbx-wait.txt" || true
    sec done
}

# Before against after (`scale.sh ab`, a kit built with BEFORE=REV): at
# TT threads TM1 with the fast path, read-only YCSB theta 0 (1M rows) and
# TPC-C one warehouse a thread, on the latched and latch-free tables (TM1:
# latch-free swap), ROUNDS rounds (default 3) alternating which build runs
# first; then DBx1000's NO_WAIT beside heirloom's no-wait of both builds
# (TPC-C TT warehouses, YCSB theta 0.9), two rounds; each cell's
# after/before by round and their geometric mean. AB_POLICY=waitdie (or
# detect, woundwait) compares that policy inside DBx1000 instead, beside
# DBx1000's WAIT_DIE (DL_DETECT; wound-wait beside NO_WAIT), with TPC-C at
# 4 warehouses, where transactions conflict. AB_BUCKETS=N runs both
# builds at N buckets (the kit's --buckets, HEIRLOOM_BUCKETS inside
# DBx1000), so that a change of the default size between the builds (the
# latch-free tables' default follows the cores since 9f2ad32) does not
# enter the comparison. RUN_BUDGET default 300.
ab() {
    local TT=${TT:-16} DUR=${DUR:-0.5} rtm out work r b
    local po=${AB_POLICY:-nowait} peer=dbx-NO_WAIT tp="tp$TT TPCC -n$TT"
    case $po in
        nowait) ;;
        waitdie) peer=dbx-WAIT_DIE ;;
        detect) peer=dbx-DL_DETECT ;;
        woundwait) ;;
        *) echo "scale.sh ab: AB_POLICY is nowait, waitdie, detect or woundwait, not $po" >&2; exit 2 ;;
    esac
    [ "$po" = nowait ] || tp="tp4 TPCC -n4"
    local B=(--threads "$TT" --duration "$DUR" --warmup 0.2 --sli off)
    if [ -n "${AB_BUCKETS:-}" ]; then
        [[ $AB_BUCKETS =~ ^[0-9]+$ ]] || { echo "scale.sh ab: AB_BUCKETS is a number of buckets, not $AB_BUCKETS" >&2; exit 2; }
        B+=(--buckets "$AB_BUCKETS")
        export HEIRLOOM_BUCKETS=$AB_BUCKETS
    fi
    RUN_BUDGET=${RUN_BUDGET:-300}
    begin ab "${1:-kit}" bin/heirloom-before "BEFORE=REV "
    work=$(mktemp -d)
    sec "before/after at $TT threads: TM1, read-only YCSB theta 0, TPC-C; ${ROUNDS:-3} rounds"
    for r in $(seq 1 "${ROUNDS:-3}"); do
        local order=(heirloom-before heirloom)
        [ $((r % 2)) = 0 ] && order=(heirloom heirloom-before)
        for b in "${order[@]}"; do
            timeout 40 bin/$b bench --workload tm1 --table latched,latchfree-swap "${B[@]}" \
                --json "$work/tm1.$b.$r.json" > /dev/null || echo "tm1 $b $r: failed"
            timeout 40 bin/$b bench --workload ycsb --scale 1000000 --opt read-share=1 --table latched,latchfree "${B[@]}" \
                --json "$work/ycsb.$b.$r.json" > /dev/null || echo "ycsb $b $r: failed"
            timeout 40 bin/$b bench --workload tpcc --scale 1/thread --table latched,latchfree "${B[@]}" \
                --json "$work/tpcc.$b.$r.json" > /dev/null || echo "tpcc $b $r: failed"
        done
    done
    python3 - "$work" <<'PY' || true
import glob, json, math, os, sys
runs = {}
for f in glob.glob(os.path.join(sys.argv[1], "*.json")):
    w, b, r = os.path.basename(f).split(".")[:3]
    for x in json.load(open(f))["runs"]:
        runs.setdefault((w, x["table"]), {}).setdefault(int(r), {})[b] = x["tps"]
for (w, t), rs in sorted(runs.items()):
    q = [v["heirloom"] / v["heirloom-before"] for _, v in sorted(rs.items()) if len(v) == 2]
    if q:
        g = math.exp(sum(map(math.log, q)) / len(q))
        print(f"{w:5} {t:15} after/before {g:.3f} (rounds {' '.join(f'{x:.3f}' for x in q)})")
PY
    (cd "$work" && tar -czf "$out/ab-json.tgz" ./*.json) || true
    rm -rf "$work"
    sec "DBx1000 at $TT threads, $po, before/after"
    dbx_rounds "$out/ab-dbx.txt" "$tp;y9 YCSB -z0.9" "$peer" \
        "heirloom-latched-$po-before" "heirloom-latched-$po" "heirloom-latchfree-$po-before" "heirloom-latchfree-$po" none
    python3 - "$out/ab-dbx.txt" "$po" <<'PY' || true
import math, sys
v = {}
po = sys.argv[2]
for line in open(sys.argv[1]):
    r, w, _, c, tps = line.split()[:5]
    if tps != "DNF":
        v[(w, c, r)] = float(tps)
for w in sorted({k[0] for k in v}):
    for t in ("latched", "latchfree"):
        a, b = f"heirloom-{t}-{po}", f"heirloom-{t}-{po}-before"
        q = [v[(w, a, r)] / v[(w, b, r)] for r in ("1", "2") if (w, a, r) in v and (w, b, r) in v]
        if q:
            print(f"{w:5} {t:10} {po} after/before {math.exp(sum(map(math.log, q)) / len(q)):.3f} (rounds {' '.join(f'{x:.3f}' for x in q)})")
PY
    sec done
}

# Row S fast holds auto (the default: the switch), always on and off
# (`scale.sh rows`), at TT threads: in the kit YCSB as DBx1000 runs it
# (half the requests update) under no-wait and detect, read-only YCSB
# theta 0.9 (what the row fast path is for) and TPC-C one warehouse a
# thread with --breakdown, on the latched and latch-free tables,
# interleaved rounds; inside DBx1000 (TPC-C with TT and 4 warehouses, YCSB
# theta 0.9) its NO_WAIT beside heirloom's no-wait on both tables with the
# row fast path auto, on (HEIRLOOM_FAST_ROWS=1) and off (0), two rounds.
# RUN_BUDGET default 250. Files in $OUT: log.txt, rows-dbx.txt,
# rows-ycsb-dbx.json, rows-ycsb-ro.json, rows-tpcc.json. A kit built
# before the DBx1000 patch read HEIRLOOM_FAST_ROWS runs every cell with
# the row fast path on, and one built before the switch every cell but
# the rowsoff ones: rebuild it.
rows() {
    local TT=${TT:-16} DUR=${DUR:-0.5} H=bin/heirloom rtm out
    local B=(--threads "$TT" --table latched,latchfree --sli off --fast-rows auto,on,off --duration "$DUR" --warmup 0.2)
    RUN_BUDGET=${RUN_BUDGET:-250}
    begin rows "${1:-kit}" bin/heirloom
    sec "row S fast holds auto, on and off at $TT threads, YCSB as DBx1000 runs it, no-wait and detect, 3 rounds"
    timeout 60 $H bench --stuck-after 5 --workload ycsb --profile dbx1000 --policy nowait,detect --repeat 3 "${B[@]}" \
        --json "$out/rows-ycsb-dbx.json" | tail -17 || echo "rows, YCSB: timed out"
    sec "row S fast holds auto, on and off at $TT threads, read-only YCSB theta 0.9, 2 rounds"
    timeout 60 $H bench --stuck-after 5 --workload ycsb --scale 1000000 --opt read-share=1 --opt theta=0.9 --repeat 2 "${B[@]}" \
        --json "$out/rows-ycsb-ro.json" | tail -11 || echo "rows, read-only YCSB: timed out"
    sec "row S fast holds auto, on and off at $TT threads, TPC-C one warehouse a thread, --breakdown, 2 rounds"
    timeout 60 $H bench --stuck-after 5 --workload tpcc --scale 1/thread --breakdown --repeat 2 "${B[@]}" \
        --json "$out/rows-tpcc.json" | tail -11 || echo "rows, TPC-C: timed out"
    sec "inside DBx1000 at $TT threads, no-wait, row S fast holds auto, on and off"
    dbx_rounds "$out/rows-dbx.txt" "tp$TT TPCC -n$TT;tp4 TPCC -n4;y9 YCSB -z0.9" dbx-NO_WAIT \
        heirloom-latched-nowait heirloom-latched-nowait-rowson heirloom-latched-nowait-rowsoff \
        heirloom-latchfree-nowait heirloom-latchfree-nowait-rowson heirloom-latchfree-nowait-rowsoff
    bash "$here/scale.sh" summary "$out/rows-dbx.txt" || true
    sec done
}

run() {
    local T=${T:-1,2,4,8,16} TT=${TT:-16} DUR=${DUR:-0.5} H=bin/heirloom rtm out
    local top=${T##*,}
    begin run "${1:-kit}" bin/heirloom
    # Hardware counters where the machine lets a process count its own
    # threads (instructions and cycles a transaction: what 16 threads cost
    # in cycles beyond one thread's, and whether in instructions).
    local cnt=()
    if $H bench --workload tm1 --threads 1 --duration 0.05 --warmup 0 --counters > /dev/null 2>&1; then
        cnt=(--counters)
        echo "# hardware counters: available, TPC-C below counts them"
    else
        echo "# hardware counters: unavailable ($($H bench --workload tm1 --threads 1 --duration 0.05 --warmup 0 --counters 2>&1 > /dev/null | head -1))"
    fi

    sec "TM1 over $T threads: Shore-MT (latched, no fast path, no SLI), SLI, the fast path"
    timeout 120 $H bench --stuck-after 5 --workload tm1 --threads "$T" --table latched,latchfree-swap --sli off,on --fast-path off,on \
        --duration "$DUR" --warmup 0.2 --json "$out/tm1.json" | grep -vE '^\s*$' | tail -40 || echo "TM1: timed out"

    for theta in 0 0.9; do
        sec "read-only YCSB theta $theta over $T threads against none"
        timeout 90 $H bench --stuck-after 5 --workload ycsb --scale 1000000 --opt read-share=1 --opt theta=$theta --threads "$T" \
            --table none,latched,latchfree,latchfree-swap --sli off --fast-rows auto,off --duration "$DUR" \
            --warmup 0.2 --json "$out/ycsb-ro-$theta.json" | tail -44 || echo "YCSB: timed out"
    done

    sec "TPC-C, one warehouse a thread, 1 and $top threads, --breakdown"
    timeout 90 $H bench --stuck-after 5 --workload tpcc --scale 1/thread --threads "1,$top" --table latched,latched-spares,latchfree --sli off \
        --fast-rows auto,off --duration "$DUR" --warmup 0.2 --breakdown "${cnt[@]}" --json "$out/tpcc.json" | tail -26 || echo "TPC-C: timed out"

    if [ -x bin/heirloom-sharing ]; then
        sec "shared and recent line writes on real cores at $TT threads: TPC-C and YCSB as DBx1000 runs it, 4096 and 65536 buckets (the default on 16 cores)"
        timeout 40 bin/heirloom-sharing bench --stuck-after 5 --workload tpcc --scale 1/thread --threads "$TT" --table latched,latched-spares,latchfree \
            --buckets 4096,65536 --sli off --duration "$DUR" --warmup 0.5 --sharing --json "$out/sharing-tpcc.json" \
            | grep -E '^# (buckets|sharing|  )' || echo "sharing, TPC-C: timed out"
        timeout 40 bin/heirloom-sharing bench --stuck-after 5 --workload ycsb --profile dbx1000 --threads "$TT" --table latched,latchfree \
            --policy nowait --buckets 4096,65536 --sli off --duration "$DUR" --warmup 0.5 --sharing --json "$out/sharing-ycsb.json" \
            | grep -E '^# (buckets|sharing|  )' || echo "sharing, YCSB: timed out"
    fi

    sec "waiting at $TT threads in the kit: YCSB as DBx1000 runs it, every policy, --breakdown"
    timeout 60 $H bench --stuck-after 5 --workload ycsb --profile dbx1000 --threads "$TT" --table latched,latchfree --sli off \
        --policy nowait,waitdie,woundwait,detect --duration "$DUR" --warmup 0.2 --breakdown \
        --json "$out/wait.json" | tail -14 || echo "waiting: timed out"
    sec "the spin before parking at $TT threads: detect, wound-wait and wait-die, spin 0 and 500 us (the default, 200, above)"
    timeout 60 $H bench --stuck-after 5 --workload ycsb --profile dbx1000 --threads "$TT" --table latched,latchfree --sli off \
        --policy woundwait,detect,waitdie --spin 0,500 --duration "$DUR" --warmup 0.2 \
        --json "$out/wait-spin.json" | tail -20 || echo "spin: timed out"
    sec "detect with DL_DETECT's wait bound (1 ms) at $TT threads"
    timeout 30 $H bench --stuck-after 5 --workload ycsb --profile dbx1000 --threads "$TT" --table latched,latchfree --sli off \
        --policy detect --lock-timeout 1 --duration "$DUR" --warmup 0.2 \
        --json "$out/wait-lt.json" | tail -4 || echo "lock timeout: timed out"
    sec "the spin before parking on TPC-C with 4 warehouses at $TT threads: 0, 200 (the default) and 500 us"
    timeout 60 $H bench --stuck-after 5 --workload tpcc --profile dbx1000 --scale 4 --threads "$TT" --table latched,latchfree --sli off \
        --policy woundwait,detect,waitdie --spin 0,200,500 --duration "$DUR" --warmup 0.2 \
        --json "$out/wait-spin-tpcc.json" | tail -30 || echo "spin, TPC-C: timed out"

    sec "DBx1000 side by side at $TT threads"
    dbx_rounds "$out/dbx.txt" "tp$TT TPCC -n$TT;tp4 TPCC -n4;y9 YCSB -z0.9" dbx-NO_WAIT dbx-WAIT_DIE dbx-DL_DETECT \
        heirloom-latched-nowait heirloom-latched-waitdie heirloom-latched-detect heirloom-latched-woundwait \
        heirloom-latchfree-nowait heirloom-latchfree-waitdie heirloom-latchfree-detect heirloom-latchfree-woundwait \
        heirloom-latchfree-detect-lt none heirloom-latchfree-nowait-buckets4096 heirloom-latchedspares-nowait
    bash "$here/scale.sh" summary "$out/dbx.txt" || true

    if [ "$rtm" -gt 0 ]; then
        sec "RTM: the tests, the index bench's elided rows, the TSX paper's index figure"
        timeout 60 bin/t-rtm -q 2>&1 | tail -3 || true
        timeout 60 bin/t-btree -q 2>&1 | tail -3 || true
        timeout 60 bin/index --keys 1000000 --seconds 0.3 --threads 1,8,"$top" --inserts 0,50 --repeat 1 \
            --json "$out/index.json" 2>&1 | tail -40 || true
        timeout 90 $H figures --only tsx-index --out "$out/tsx-index" 2>&1 | tail -10 || true
    fi
    (cd "$out" && shopt -s nullglob && set -- ./*.json ./tsx-index* && [ $# -gt 0 ] && tar -czf json.tgz "$@" && rm -rf "$@") || true
    sec done
}

case "${1:-}" in
    build) shift; build "$@" ;;
    run) shift; run "$@" ;;
    wait) shift; wait_rule "$@" ;;
    ab) shift; ab "$@" ;;
    rows) shift; rows "$@" ;;
    dry) shift; T=${T:-1,2} TT=${TT:-2} DUR=${DUR:-0.2} DNF=${DNF:-30} RUN_BUDGET=${RUN_BUDGET:-600} run "$@" ;;
    summary)
        # The DBx1000 cells' medians: scripts/dbx1000.sh's summary, kept
        # beside this script in a kit.
        shift
        [ $# -gt 0 ] || { echo "scale.sh summary: which dbx.txt?" >&2; exit 2; }
        bash "$here/dbx1000.sh" summary "$@"
        ;;
    *) usage ;;
esac
