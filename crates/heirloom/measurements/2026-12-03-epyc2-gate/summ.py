import sys, csv, math, statistics as st, collections
rows = [l.strip().split(',') for l in open(sys.argv[1]) if l.strip()]
base = sys.argv[2]
by = collections.defaultdict(dict)
for r, i, tps, w, ex, wt in rows:
    by[r][int(i)] = (float(tps), float(w), int(ex), float(wt))
order = list(dict.fromkeys(r[0] for r in rows))
for r in order:
    common = [i for i in by[r] if i in by[base]]
    ratios = [by[r][i][0] / by[base][i][0] for i in common]
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    v = list(by[r].values())
    print(f"{r:9s} n={len(v):2d} tps med {st.median(x[0] for x in v)/1000:6.1f}k  geo/{base} {g:.3f}  wounded/c {st.median(x[1] for x in v):.2f}  excl {st.median(x[2] for x in v):5.0f}  waits/c {st.median(x[3] for x in v):.2f}")
