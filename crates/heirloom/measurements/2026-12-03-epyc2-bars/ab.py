#!/usr/bin/env python3
"""After over before, round by round, from rounds.sh's JSON files (in the
directory given, default /tmp/abbars): per workload, table, policy and
thread count, the rounds, the geometric mean, the median and the range of
the per-round ratios of committed transactions a second. Writes the rounds
beside this script, to the file named second (default rounds.csv)."""
import collections, csv, glob, json, math, os, re, sys

src = sys.argv[1] if len(sys.argv) > 1 else "/tmp/abbars"
here = os.path.dirname(os.path.abspath(__file__))
cells = collections.defaultdict(dict)
rows = []
for f in sorted(glob.glob(os.path.join(src, "*.json"))):
    m = re.match(r"(before|after)-(\w+)-(\d+)\.json", os.path.basename(f))
    if not m:
        continue
    build, w, r = m.groups()
    for run in json.load(open(f))["runs"]:
        key = (w, run["table"], run["policy"], run["threads"])
        cells[key].setdefault(int(r), {})[build] = run["tps"]
        rows.append([r, w, run["table"], run["policy"], run["threads"], build, f"{run['tps']:.0f}"])
csv_name = sys.argv[2] if len(sys.argv) > 2 else "rounds.csv"
with open(os.path.join(here, csv_name), "w", newline="") as out:
    wr = csv.writer(out)
    wr.writerow(["round", "workload", "table", "policy", "threads", "build", "txn_per_s"])
    wr.writerows(sorted(rows, key=lambda x: (x[1], x[2], x[3], int(x[4]), int(x[0]), x[5])))
print(f"{'workload':<8} {'table':<10} {'policy':<10} {'thr':>3} {'rounds':>6} {'geomean':>8} {'median':>7}  range")
for key in sorted(cells):
    q = sorted(v["after"] / v["before"] for v in cells[key].values() if len(v) == 2)
    if not q:
        continue
    g = math.exp(sum(map(math.log, q)) / len(q))
    n = len(q)
    med = q[n // 2] if n % 2 else (q[n // 2 - 1] + q[n // 2]) / 2
    flag = "  <0.95" if g < 0.95 else ""
    print(f"{key[0]:<8} {key[1]:<10} {key[2]:<10} {key[3]:>3} {n:>6} {g:>8.3f} {med:>7.3f}  {q[0]:.2f}-{q[-1]:.2f}{flag}")
