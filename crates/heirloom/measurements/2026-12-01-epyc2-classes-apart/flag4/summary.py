import glob, json, math, statistics as st
rows = {}
for v in ('classes', 'plain'):
    for r in range(1, len(glob.glob(f"{v}-*.json")) + 1):
        for run in json.load(open(f'{v}-{r}.json'))['runs']:
            lm = run['breakdown']['lock_manager'] * run['threads'] / run['tps'] * 1e6
            rows.setdefault((run['table'], run['threads'], v), []).append((lm, run['tps']))
g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print('# table threads build: lock-manager us/txn by round (median); txn/s median')
for k in sorted(rows):
    lms = [x[0] for x in rows[k]]
    print(f"{k[0]:10} {k[1]} {k[2]:8} lm {' '.join(f'{x:.2f}' for x in lms)} (median {st.median(lms):.2f})  txn/s {st.median([x[1] for x in rows[k]]):.0f}")
for t in ('latched', 'latchfree'):
    for n in (1, 2):
        a, b = rows[(t, n, 'plain')], rows[(t, n, 'classes')]
        lr = [y[0] / x[0] for x, y in zip(a, b)]
        tr = [y[1] / x[1] for x, y in zip(a, b)]
        print(f'{t} {n} thr: classes over plain, lm us/txn geomean {g(lr):.3f} (rounds {", ".join(f"{x:.3f}" for x in lr)}); txn/s {g(tr):.3f}')
