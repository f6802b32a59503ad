#!/usr/bin/env bash
# Runs heirloom's stress tests (tests/stress.rs: every table kind under
# every conflict policy, with and without inheritance, 8 threads, an
# independent checker, and a watchdog that fails a run in which nothing
# commits for 30 s) N times in a row, and stops at the first failure. To
# find lost wake-ups under wait-die and wound-wait, first make
# `AGE_RECHECK` in crates/heirloom/src/txn/wait.rs an hour: with its 20 ms
# re-check a lost wake-up only costs 20 ms, without it the run stalls.
#
#   scripts/stress-loop.sh 50        # the runs in a row (default 50)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
case "$runs" in ''|*[!0-9]*) echo "stress-loop.sh: $runs is not a number of runs" >&2; exit 2;; esac
cargo test --release -p heirloom --test stress --no-run -q 2> /dev/null
log=$(mktemp)
for i in $(seq 1 "$runs"); do
    if ! cargo test --release -q -p heirloom --test stress > "$log" 2>&1; then
        cat "$log"
        echo "stress loop: run $i of $runs failed"
        echo "$((i - 1)) passed, 1 failed"
        exit 1
    fi
done
rm -f "$log"
echo "stress loop: $runs runs in a row passed"
echo "$runs passed, 0 failed"
