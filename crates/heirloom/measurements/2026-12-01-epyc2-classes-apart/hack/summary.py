import json, statistics as st, glob
rows = {}
for v in ('classes', 'noclasses'):
    for r in range(1, 5):
        d = json.load(open(f'{v}-{r}.json'))
        for run in d['runs']:
            lm = run['breakdown']['lock_manager'] * run['threads'] / run['tps'] * 1e6
            rows.setdefault((run['table'], run['threads'], v), []).append((lm, run['tps']))
print('# table threads build: lock-manager us/txn by round (median), txn/s median')
for k in sorted(rows):
    lms = [x[0] for x in rows[k]]; tps = [x[1] for x in rows[k]]
    print(f"{k[0]:10} {k[1]} {k[2]:10} lm {' '.join(f'{x:.2f}' for x in lms)}  (median {st.median(lms):.2f})  txn/s {st.median(tps):.0f}")
for t in ('latched', 'latchfree'):
    for n in (1, 2):
        a = rows[(t, n, 'noclasses')]; b = rows[(t, n, 'classes')]
        ratios = [y[0] / x[0] for x, y in zip(a, b)]
        tr = [y[1] / x[1] for x, y in zip(a, b)]
        g = lambda v: __import__('math').exp(sum(map(__import__('math').log, v)) / len(v))
        print(f'{t} {n}: lm classes/noclasses geomean {g(ratios):.3f} by round {[round(x,3) for x in ratios]}; txn/s {g(tr):.3f}')
