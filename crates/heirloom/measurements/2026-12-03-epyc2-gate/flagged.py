# flagged.py flagged.csv: each build over 18a38ac by cell, the geometric
# mean of the per-round ratios with two standard errors, and the median
# exclusive runs a run.
import math, collections, statistics as st, sys
v = collections.defaultdict(lambda: collections.defaultdict(dict))
for l in open(sys.argv[1]):
    b, i, w, tab, pol, tps, ex = l.strip().split(',')
    v[(w, tab, pol)][b][int(i)] = (float(tps), int(ex))
for k in sorted(v):
    base = v[k]['18a38ac']
    print(*k, '18a38ac exclusive runs', st.median(x[1] for x in base.values()))
    for b in ('56e35a2', 'head'):
        lr = [math.log(v[k][b][i][0] / base[i][0]) for i in v[k][b] if i in base]
        m, se = st.mean(lr), st.stdev(lr) / math.sqrt(len(lr))
        print(f"  {b}: {math.exp(m):.3f} ({math.exp(m - 2 * se):.3f}-{math.exp(m + 2 * se):.3f}), "
              f"n {len(lr)}, exclusive runs {st.median(x[1] for x in v[k][b].values())}")
