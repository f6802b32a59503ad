#!/usr/bin/env python3
"""After over before, round by round, from ab.sh's JSON files (in the
directory given, default /tmp/ab86): per workload, table and thread count,
the rounds, the geometric mean, the median and the range of the per-round
ratios of committed transactions a second. Writes the rounds beside this
script, to the file named second (default ab-rounds.csv)."""
import collections, csv, glob, json, math, os, re, sys

src = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ab86"
here = os.path.dirname(os.path.abspath(__file__))
cells = collections.defaultdict(dict)
rows = []
for f in sorted(glob.glob(os.path.join(src, "*.json"))):
    build, w, r = re.match(r"(before|after)-(\w+)-(\d+)\.json", os.path.basename(f)).groups()
    for run in json.load(open(f))["runs"]:
        key = (w, run["table"], run["threads"])
        cells[key].setdefault(int(r), {})[build] = run["tps"]
        rows.append([r, w, run["table"], run["threads"], build, f"{run['tps']:.0f}"])
csv_name = sys.argv[2] if len(sys.argv) > 2 else "ab-rounds.csv"
with open(os.path.join(here, csv_name), "w", newline="") as out:
    wr = csv.writer(out)
    wr.writerow(["round", "workload", "table", "threads", "build", "txn_per_s"])
    wr.writerows(sorted(rows, key=lambda x: (x[1], x[2], int(x[3]), int(x[0]), x[4])))
print(f"{'workload':<8} {'table':<10} {'thr':>3} {'rounds':>6} {'geomean':>8} {'median':>7}  range")
for key in sorted(cells):
    q = sorted(v["after"] / v["before"] for v in cells[key].values() if len(v) == 2)
    if not q:
        continue
    g = math.exp(sum(map(math.log, q)) / len(q))
    n = len(q)
    med = q[n // 2] if n % 2 else (q[n // 2 - 1] + q[n // 2]) / 2
    print(f"{key[0]:<8} {key[1]:<10} {key[2]:>3} {n:>6} {g:>8.3f} {med:>7.3f}  {q[0]:.2f}-{q[-1]:.2f}")
