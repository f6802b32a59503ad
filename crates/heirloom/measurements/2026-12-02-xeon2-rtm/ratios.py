"""Per-round ratios of each elided table over its latched form (the same
rounds of tables.sh), their geometric mean and range, and the elided
sections' counters. python3 ratios.py tables/"""
import json, math, sys
d = sys.argv[1] if len(sys.argv) > 1 else "tables"
for w in ["tm1", "tpcc", "ycsb"]:
    runs = json.load(open(f"{d}/{w}.json"))["runs"]
    by = {(r["table"], r["threads"]): r for r in runs}
    for plain, htm in [("latched", "latched-htm"), ("global", "global-htm")]:
        for t in sorted({r["threads"] for r in runs}):
            a, b = by[(plain, t)], by[(htm, t)]
            rs = [y / x for x, y in zip(a["tps_runs"], b["tps_runs"])]
            g = math.exp(sum(map(math.log, rs)) / len(rs))
            e = b["elision"]
            print(f"{w:5} {htm:11} {t} thr: {g:.3f} ({min(rs):.2f}-{max(rs):.2f}) of {plain}; "
                  f"sections/txn {e['sections'] / b['committed']:.2f}, under the latch {e['under_latch_share']:.4f}, "
                  f"aborts/section conflict {e['conflict']:.4f} capacity {e['capacity']:.4f} busy {e['busy']:.4f} other {e['other']:.4f}")
