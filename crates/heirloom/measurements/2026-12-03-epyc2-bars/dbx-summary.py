#!/usr/bin/env python3
"""dbx-rounds.sh's output: per cell the median txn/s and aborted attempts a
commit, and the geometric means of per-round ratios that issue 57 asks
for (heirloom's policy over DBx1000's, detect over heirloom's own no-wait)."""
import collections, math, sys

runs = collections.defaultdict(dict)
for line in open(sys.argv[1] if len(sys.argv) > 1 else "dbx-rounds.txt"):
    p = line.split()
    if len(p) == 4 and p[0].isdigit():
        runs[p[1]][int(p[0])] = (float(p[2]), float(p[3]))

def med(xs):
    xs = sorted(xs); n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

print(f"{'cell':<12} {'rounds':>6} {'txn/s (median)':>15} {'aborts/commit':>14}")
for c in runs:
    v = list(runs[c].values())
    print(f"{c:<12} {len(v):>6} {med([x[0] for x in v]):>15.0f} {med([x[1] for x in v]):>14.2f}")

def ratio(a, b):
    q = sorted(runs[a][r][0] / runs[b][r][0] for r in runs[a] if r in runs.get(b, {}))
    if not q:
        return
    g = math.exp(sum(map(math.log, q)) / len(q))
    print(f"{a + ' / ' + b:<26} {g:.3f} (rounds {q[0]:.2f}-{q[-1]:.2f}, {len(q)})")

print()
for t in ("lf", "lat"):
    ratio(f"{t}-nowait", "NO_WAIT")
    ratio(f"{t}-waitdie", "WAIT_DIE")
    ratio(f"{t}-detect", "DL_DETECT")
    ratio(f"{t}-detect", f"{t}-nowait")
