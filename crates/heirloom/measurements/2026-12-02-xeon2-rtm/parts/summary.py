"""rounds.sh's runs: after over before per (workload, table, threads),
round by round (geometric mean and range); global-htm over global within
each build; global-htm's sections (conflict aborts a section, share under
the latch). python3 summary.py DIR (the variants' directories keep
their JSON in json.tgz: tar xzf it there first)"""
import glob, json, math, os, sys
d = sys.argv[1] if len(sys.argv) > 1 else sys.exit("usage: summary.py DIR")
runs = {}
for f in glob.glob(f"{d}/*.json"):
    w, tag, r = os.path.basename(f)[:-5].rsplit("-", 2)
    for x in json.load(open(f))["runs"]:
        runs[(w, tag, int(r), x["table"], x["threads"])] = x
def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
rounds = sorted({k[2] for k in runs})
for w in sorted({k[0] for k in runs}):
    print(f"== {w}")
    for t in sorted({k[4] for k in runs if k[0] == w}):
        line = [f"{t} thr:"]
        for table in ["global", "global-htm"]:
            rs = [runs[(w, "after", r, table, t)]["tps"] / runs[(w, "before", r, table, t)]["tps"] for r in rounds
                  if (w, "after", r, table, t) in runs and (w, "before", r, table, t) in runs]
            line.append(f"{table} after/before {gm(rs):.3f} ({min(rs):.2f}-{max(rs):.2f})")
        for tag in ["before", "after"]:
            rs = [runs[(w, tag, r, "global-htm", t)]["tps"] / runs[(w, tag, r, "global", t)]["tps"] for r in rounds]
            es = [runs[(w, tag, r, "global-htm", t)]["elision"] for r in rounds]
            tps = gm([runs[(w, tag, r, "global", t)]["tps"] for r in rounds])
            line.append(f"{tag}: global {tps/1000:.0f}k, htm/global {gm(rs):.3f} ({min(rs):.2f}-{max(rs):.2f}), "
                        f"conflict/section {sum(e['conflict'] for e in es)/len(es):.3f}, under latch {sum(e['under_latch_share'] for e in es)/len(es):.3f}")
        print("  " + "; ".join(line))
