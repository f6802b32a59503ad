import json, glob, math, sys, collections
d = sys.argv[1]
def load(kind, tag, r):
    j = json.load(open(f"{d}/{kind}-{tag}-{r}.json"))
    return {(x["table"], x["threads"]): x["committed"] / x["seconds"] for x in j["runs"]}
rounds = sorted({int(f.split('-')[-1].split('.')[0]) for f in glob.glob(f"{d}/ro-after-*.json")})
ratios = collections.defaultdict(list); shares = collections.defaultdict(list)
for r in rounds:
    for kind in ("ro", "tm1"):
        b, a = load(kind, "before", r), load(kind, "after", r)
        for k in a:
            ratios[(kind,) + k].append(a[k] / b[k])
            if kind == "ro" and k[0] != "none":
                nb, na = b[("none", k[1])], a[("none", k[1])]
                shares[k + ("before",)].append(b[k] / nb); shares[k + ("after",)].append(a[k] / na)
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))
med = lambda v: sorted(v)[len(v)//2]
print(f"rounds: {len(rounds)}")
print("after/before throughput, geometric mean (min..max)")
for k in sorted(ratios):
    v = ratios[k]; print(f"  {k[0]:4} {k[1]:10} {k[2]:2} thr  {gm(v):.3f}  ({min(v):.3f}..{max(v):.3f})")
print("read-only YCSB share of none in the same run, median (min..max)")
for k in sorted(shares):
    v = shares[k]; print(f"  {k[0]:10} {k[1]:2} thr {k[2]:6}  {med(v):.3f}  ({min(v):.3f}..{max(v):.3f})")
