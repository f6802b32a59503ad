#!/usr/bin/env bash
# heirloom's lock manager against Berkeley DB's lock subsystem (libdb 5.3)
# on the same three lock shapes, runs interleaved, medians of REPEAT rounds.
#
#   scripts/lockshapes.sh [SECONDS] [REPEAT] [THREADS...]
#
# Needs gcc and Berkeley DB's headers (Debian: apt-get install libdb5.3-dev).
# Defaults: 1 s per run, 3 rounds, 1 2 8 32 threads; heirloom's latched
# table with SLI off (TABLES="latched latchfree" runs each of those tables),
# Berkeley DB with three lock_get calls and with one lock_vec call per
# transaction.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1}
repeat=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
if [ $# -gt 0 ]; then threads=("$@"); else threads=(1 2 8 32); fi
read -r -a tables <<< "${TABLES:-latched}"
if [ ! -f /usr/include/db.h ]; then
    echo "lockshapes.sh: Berkeley DB's headers are missing (apt-get install libdb5.3-dev)" >&2
    exit 2
fi
out=target/lockshapes
mkdir -p "$out"
gcc -O2 -Wall -pthread -o "$out/bdb-lockshapes" scripts/bdb-lockshapes.c -ldb-5.3
cargo build --release --example lockshapes -q
heirloom=target/release/examples/lockshapes
raw="$out/raw.txt"
: > "$raw"
for round in $(seq "$repeat"); do
    for shape in hot update tm1; do
        for t in "${threads[@]}"; do
            for table in "${tables[@]}"; do
                "$heirloom" "$shape" "$t" "$seconds" "$table" off >> "$raw"
            done
            "$out/bdb-lockshapes" "$shape" "$t" "$seconds" get >> "$raw"
            "$out/bdb-lockshapes" "$shape" "$t" "$seconds" vec >> "$raw"
        done
    done
    echo "round $round of $repeat done" >&2
done
# Medians per (system, shape, threads), then heirloom over the faster bdb.
python3 - "$raw" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    system, shape, threads, tps = line.split()
    runs[(system, shape, int(threads))].append(float(tps))
med = {k: statistics.median(v) for k, v in runs.items()}
tables = sorted({k[0] for k in med if k[0].startswith("heirloom:")}, key=lambda s: s != "heirloom:latched")
print(f"{'shape':<7} {'threads':>7} {'table':>10} {'heirloom':>12} {'bdb get':>12} {'bdb vec':>12} {'heirloom/bdb':>13}")
for shape in ("hot", "update", "tm1"):
    for t in sorted({k[2] for k in med if k[1] == shape}):
        for table in tables:
            h = med[(table, shape, t)]
            g = med[("bdb", shape, t)]
            v = med[("bdb:vec", shape, t)]
            name = table.split(":")[1]
            print(f"{shape:<7} {t:>7} {name:>10} {h:>12.0f} {g:>12.0f} {v:>12.0f} {h / max(g, v):>12.2f}x")
PY
