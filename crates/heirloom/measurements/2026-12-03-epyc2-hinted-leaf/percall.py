#!/usr/bin/env python3
"""Inclusive instructions a call of every function whose name contains one
of the patterns given, from a callgrind output file's call records
(`calls=` lines and the inclusive cost line after each).

    python3 percall.py callgrind.out PATTERN...
"""
import collections, re, sys

path, pats = sys.argv[1], sys.argv[2:]
names = {}
calls = collections.Counter()
incl = collections.Counter()
callee = None      # the function a `cfn=` line named
pending = None     # (callee, count) of a `calls=` line, until its cost line
for line in open(path):
    line = line.rstrip("\n")
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "cfn":
            callee = names.get(m.group(2))
        continue
    if line.startswith("calls="):
        pending = (callee, int(line.split()[0][len("calls="):]))
        continue
    if pending and line and (line[0].isdigit() or line[0] in "+-*"):
        f, n = pending
        if f and any(p in f for p in pats):
            calls[f] += n
            incl[f] += int(line.split()[-1])
        pending = None
for f in sorted(calls):
    print(f"{incl[f] / calls[f]:10.1f} per call, {calls[f]:8d} calls  {f[:110]}")
