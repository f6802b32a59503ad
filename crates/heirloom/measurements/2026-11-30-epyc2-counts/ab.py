#!/usr/bin/env python3
"""After over before, round by round, from ab-rounds.csv: per workload,
table and thread count, the rounds (all batches pooled), the geometric
mean, the median and the range of the per-round ratios."""
import csv, math, collections, os

here = os.path.dirname(os.path.abspath(__file__))
cells = collections.defaultdict(dict)
for r in csv.DictReader(open(os.path.join(here, "ab-rounds.csv"))):
    key = (r["workload"], r["table"], int(r["threads"]))
    cells[key].setdefault((r["batch"], r["round"]), {})[r["build"]] = float(r["txn_per_s"])
print(f"{'workload':<8} {'table':<10} {'thr':>3} {'rounds':>6} {'geomean':>8} {'median':>7}  range")
for key in sorted(cells):
    q = sorted(v["after"] / v["before"] for v in cells[key].values() if len(v) == 2)
    g = math.exp(sum(map(math.log, q)) / len(q))
    n = len(q)
    med = q[n // 2] if n % 2 else (q[n // 2 - 1] + q[n // 2]) / 2
    print(f"{key[0]:<8} {key[1]:<10} {key[2]:>3} {n:>6} {g:>8.3f} {med:>7.3f}  {q[0]:.2f}-{q[-1]:.2f}")
