#!/usr/bin/env bash
# Runs the test suite (release mode) ROUNDS times beside LOAD busy processes,
# to shake out tests that assume a quiet machine. Each failing round's output
# is kept in OUT/round-N.log; a summary line per round goes to stdout.
#
#   scripts/tests-under-load.sh [ROUNDS=10] [LOAD=2] [OUT=target/tests-under-load] [-- CARGO-TEST-ARGS]
#
# Arguments after `--` go to `cargo test` (e.g. `3 2 -- -p heirloom`).
# Found this way: tests/alloc.rs counted allocations process-wide, so the
# harness thread's own allocations, delayed by the load, could land in the
# counting window (about one run in 200); it now counts its own thread only.
# And tests/fast_path.rs's rare-table-lockers run on the server table (six
# agents, 20,000 transactions each) did not end within its minute beside two
# busy processes, in every round (2026-11-26); the server runs a tenth now.
set -uo pipefail
cd "$(dirname "$0")/.."
pos=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pos+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
rounds=${pos[0]:-10}
load=${pos[1]:-2}
out=${pos[2]:-target/tests-under-load}
mkdir -p "$out"
cargo test --workspace --release --no-run "$@" >/dev/null 2>&1 || { echo "build failed"; exit 2; }
pids=()
for _ in $(seq "$load"); do
    ( while :; do :; done ) &
    pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
failed=0
for i in $(seq "$rounds"); do
    start=$(date +%s)
    if cargo test --workspace --release "$@" >"$out/round-$i.log" 2>&1; then
        echo "round $i: ok ($(( $(date +%s) - start )) s)"
        rm -f "$out/round-$i.log"
    else
        failed=$((failed + 1))
        echo "round $i: FAILED ($(( $(date +%s) - start )) s), log in $out/round-$i.log"
        grep -E "^(test .* FAILED|---- |thread '.*' panicked)" "$out/round-$i.log" | head -20
    fi
done
echo "$failed of $rounds rounds failed"
[ "$failed" -eq 0 ]
