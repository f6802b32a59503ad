# others.py others.csv: the serial latch over 56e35a2 by cell, the
# geometric mean of the per-round ratios.
import math, collections, sys
v = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    b, i, w, t, tab, pol, tps = l.strip().split(',')
    v[(w, int(t), tab, pol)].setdefault(b, {})[int(i)] = float(tps)
for k in sorted(v):
    a, n = v[k]['56e35a2'], v[k]['latch']
    lr = [math.log(n[i] / a[i]) for i in n if i in a]
    print(*k, f"{math.exp(sum(lr) / len(lr)):.3f}", f"({len(lr)} rounds)")
