# ci.py FILE BASE: each build's geometric mean of its per-round ratios to
# BASE (same round, same seed) with a 95% interval (two standard errors of
# the mean log ratio), and the median wounded aborts a commit.
import math, statistics as st, collections, sys
f, base = sys.argv[1], sys.argv[2]
by = collections.defaultdict(dict)
for l in open(f):
    r, i, t, w, ex, wt = l.strip().split(',')
    by[r][int(i)] = (float(t), float(w))
for r in by:
    if r == base:
        continue
    lr = [math.log(by[r][i][0] / by[base][i][0]) for i in by[r] if i in by[base]]
    m = st.mean(lr)
    se = st.stdev(lr) / math.sqrt(len(lr))
    print(f"{f} {r}: n {len(lr)} geo {math.exp(m):.3f} (95% {math.exp(m - 2 * se):.3f}-{math.exp(m + 2 * se):.3f}) "
          f"wounded/commit {st.median(x[1] for x in by[r].values()):.2f} vs {st.median(x[1] for x in by[base].values()):.2f}")
