#!/usr/bin/env python3
"""Per-round ratios of the kit's interleaved rounds: for each JSON file
given, each table and policy, auto/on, off/on and auto/off (geometric
mean, min-max over the rounds), from the runs' tps_runs."""
import json, math, sys

for path in sys.argv[1:]:
    runs = json.load(open(path))["runs"]
    by = {}
    for r in runs:
        base, _, rows = r["table"].partition("/")
        setting = {"rows-on": "on", "rows-off": "off", "": "auto"}[rows]
        by.setdefault((base, r["policy"], r["threads"]), {})[setting] = r["tps_runs"]
    for (table, policy, threads), s in sorted(by.items()):
        out = [f"{path.split('/')[-1]:<14} {table:<10} {policy:<7} {threads:>2} thr"]
        for a, b in (("auto", "on"), ("off", "on"), ("auto", "off")):
            if a in s and b in s:
                q = [x / y for x, y in zip(s[a], s[b])]
                g = math.exp(sum(map(math.log, q)) / len(q))
                out.append(f"{a}/{b} {g:.3f} ({min(q):.2f}-{max(q):.2f})")
        print("  ".join(out))
