import collections,math,statistics,sys
v=collections.defaultdict(dict); ab={}
for l in open('/tmp/dbxrows/out.txt'):
    p=l.split()
    if len(p)!=5 or not p[0].isdigit(): continue
    r,cell,c,tps,a=p; v[(cell,c)][r]=float(tps); ab[(cell,c,r)]=float(a)
def geo(q): return math.exp(sum(map(math.log,q))/len(q))
for cell in ('y9','tp'):
    print(cell)
    for c in sorted({k[1] for k in v if k[0]==cell}):
        xs=list(v[(cell,c)].values()); print(f"  {c:16} median {statistics.median(xs):9.0f}  aborts/commit {statistics.median([ab[(cell,c,r)] for r in v[(cell,c)]]):.3f}  n={len(xs)}")
    for base in ('lf-nowait','lat-nowait','lf-detect','lat-detect'):
        on,off=v[(cell,base+'-on')],v[(cell,base+'-off')]
        q=[off[r]/on[r] for r in on if r in off]
        print(f"  {base:12} off/on geo {geo(q):.3f} range {min(q):.2f}-{max(q):.2f} n={len(q)}")
    for base,ref in (('nowait','NO_WAIT'),('detect','DL_DETECT')):
        for t in ('lf','lat'):
            for s in ('on','off'):
                a,b=v[(cell,f'{t}-{base}-{s}')],v[(cell,ref)]
                q=[a[r]/b[r] for r in a if r in b]
                print(f"  {t}-{base}-{s} / {ref}: geo {geo(q):.3f} range {min(q):.2f}-{max(q):.2f}")
