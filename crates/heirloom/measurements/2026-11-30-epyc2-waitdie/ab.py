#!/usr/bin/env python3
"""After over before, round by round, from the JSON `ab.sh` and `ab2.sh`
wrote (in /tmp/ab and /tmp/ab2, or the directories given; their rounds
pool): per workload, table, policy and thread count, the rounds, the
geometric mean and the range of the per-round throughput ratios; and,
pooled over the rounds, aborted attempts per commit, waits and contended
latches (or CAS retries) per transaction, before -> after. Writes
ab-rounds.csv beside itself (one row per run)."""
import csv, glob, json, math, collections, os, re, sys

srcs = sys.argv[1:] or ["/tmp/ab", "/tmp/ab2"]
here = os.path.dirname(os.path.abspath(__file__))
cells = collections.defaultdict(dict)
rows = []
for f in sorted(f for src in srcs for f in glob.glob(os.path.join(src, "*.json"))):
    build, wl, rnd = re.match(r"(before|after)-(\w+)-(\d+)\.json", os.path.basename(f)).groups()
    for r in json.load(open(f))["runs"]:
        p = r["per_txn"]
        key = (wl, r["table"], r["policy"], r["threads"])
        v = dict(tps=r["tps"], committed=r["committed"], aborted=r["aborted"],
                 waits=p["waits"], contended=p["latch_contended"] + p["cas_retries"])
        cells[key].setdefault(int(rnd), {})[build] = v
        rows.append(dict(round=rnd, build=build, workload=wl, table=r["table"], policy=r["policy"],
                         threads=r["threads"], txn_per_s=round(r["tps"]), committed=r["committed"],
                         aborted=r["aborted"], waits_per_txn=round(p["waits"], 4),
                         contended_per_txn=round(v["contended"], 4)))
with open(os.path.join(here, "ab-rounds.csv"), "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)

def pooled(runs, build, what):
    c = sum(x[build]["committed"] for x in runs)
    if what == "aborts":
        return sum(x[build]["aborted"] for x in runs) / c
    return sum(x[build][what] * x[build]["committed"] for x in runs) / c

print(f"{'workload':<6} {'table':<9} {'policy':<9} {'thr':>3} {'n':>3} {'geomean':>7}  {'range':<9}  "
      f"{'aborts/commit':<13}  {'waits/txn':<13}  contended/txn")
for key in sorted(cells):
    runs = [x for x in cells[key].values() if len(x) == 2]
    q = sorted(x["after"]["tps"] / x["before"]["tps"] for x in runs)
    g = math.exp(sum(map(math.log, q)) / len(q))
    a = [f"{pooled(runs, 'before', w):.3f}->{pooled(runs, 'after', w):.3f}" for w in ("aborts", "waits", "contended")]
    print(f"{key[0]:<6} {key[1]:<9} {key[2]:<9} {key[3]:>3} {len(q):>3} {g:>7.3f}  {q[0]:.2f}-{q[-1]:.2f}  "
          f"{a[0]:<13}  {a[1]:<13}  {a[2]}")
