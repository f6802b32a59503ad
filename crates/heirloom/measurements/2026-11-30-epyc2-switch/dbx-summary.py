#!/usr/bin/env python3
"""dbx-rounds.txt: per cell, each configuration's median txn/s, and the
geometric means (min-max) of per-round ratios against DBx1000's variant of
the same policy and between the row fast path's settings."""
import math, sys
from collections import defaultdict

rounds = defaultdict(dict)
for line in open(sys.argv[1] if len(sys.argv) > 1 else "dbx-rounds.txt"):
    f = line.split()
    if len(f) == 5 and f[0].isdigit():
        rounds[(f[1], int(f[0]))][f[2]] = float(f[3])
cells = sorted({c for c, _ in rounds})
def gm(q):
    return f"{math.exp(sum(map(math.log, q)) / len(q)):.3f} ({min(q):.2f}-{max(q):.2f})"
for cell in cells:
    rs = [rounds[k] for k in sorted(rounds) if k[0] == cell]
    names = list(rs[0])
    print(f"== {cell}: median txn/s")
    for n in names:
        v = sorted(r[n] for r in rs if n in r)
        print(f"  {n:<16} {v[len(v) // 2]:>9.0f}")
    pairs = [(f"{t}-{p}-{s}", ref) for t in ("lf", "lat") for p, ref in (("nowait", "NO_WAIT"), ("detect", "DL_DETECT"))
             for s in ("auto", "on", "off")]
    pairs += [(f"{t}-{p}-auto", f"{t}-{p}-{s}") for t in ("lf", "lat") for p in ("nowait", "detect") for s in ("on", "off")]
    for a, b in pairs:
        q = [r[a] / r[b] for r in rs if a in r and b in r]
        if q:
            print(f"  {a:>16} / {b:<16} {gm(q)}")
