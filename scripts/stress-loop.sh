#!/usr/bin/env bash
# Runs heirloom's stress tests (tests/stress.rs: every table kind under
# every conflict policy, with and without inheritance, 8 threads, once
# with the manager told of more cores than threads so that waiters spin, an
# independent checker, and a watchdog that fails a run in which nothing
# commits for 30 s) N times in a row, and stops at the first failure.
# Waiters re-check nothing on a timer, so a lost wake-up stalls a run and
# the watchdog reports it with a picture of the lock table.
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
