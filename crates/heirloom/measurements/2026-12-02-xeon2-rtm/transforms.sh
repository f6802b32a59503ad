#!/usr/bin/env bash
# The TSX paper's two transformations on a CPU with RTM: node allocation
# from per-thread pools, and linear node search, each against the
# defaults, in the index bench (from the repository root).
#   bash transforms.sh OUT_DIR
set -euo pipefail
out=$(cd "${1:?usage: transforms.sh OUT_DIR}" && pwd)
common=(--keys 1000000 --seconds 1 --threads 2,8 --inserts 0,50 --repeat 3
        --protocols global-rw,optimistic,elided-spin,elided-spin-naive)
for t in "binary global" "binary pools" "linear global"; do
    read -r search alloc <<< "$t"
    cargo bench -q -p heirloom-btree --bench index -- "${common[@]}" \
        --search "$search" --alloc "$alloc" --json "$out/index-$search-$alloc.json" \
        > "$out/index-$search-$alloc.txt"
done
