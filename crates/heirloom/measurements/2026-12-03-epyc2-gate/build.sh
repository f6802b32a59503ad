#!/bin/bash
# builds the kit binary at each rev given into /tmp/hb/heirloom-<rev>
cd /work/main
for r in "$@"; do
  [ -x /tmp/hb/heirloom-$r ] && continue
  rm -rf /tmp/wtb; git worktree prune
  git worktree add -f /tmp/wtb $r > /dev/null 2>&1 || { echo "$r: worktree failed"; continue; }
  (cd /tmp/wtb && CARGO_TARGET_DIR=/tmp/wtb-target cargo build --release -p heirloom-bench > /tmp/hb/build-$r.log 2>&1) && cp /tmp/wtb-target/release/heirloom /tmp/hb/heirloom-$r && echo "$r built $(date +%T)" || echo "$r FAILED"
done
git worktree remove --force /tmp/wtb; git worktree prune
