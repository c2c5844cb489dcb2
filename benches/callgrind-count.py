#!/usr/bin/env python3
"""Totals of one callgrind profile, for benches/callgrind-*.sh.

usage: callgrind-count.py PROFILE [SUFFIX]

Prints `INSTRUCTIONS ALLOCATIONS CALLS`: the profile's total instructions, the calls of
`__rust_alloc`, and the calls of functions whose name ends with SUFFIX (0 without one).
"""
import re
import sys

names, fn, calls, allocs, total = {}, None, 0, 0, 0
suffix = sys.argv[2] if len(sys.argv) > 2 else None


def name(tok):
    # Callgrind compresses names: `(12) full name` the first time, `(12)` afterwards.
    m = re.match(r'\((\d+)\)(?: (.*))?', tok)
    if not m:
        return tok
    if m.group(2):
        names[m.group(1)] = m.group(2)
    return names.get(m.group(1), m.group(1))


for line in open(sys.argv[1]):
    if line.startswith('fn='):
        name(line[3:].strip())
    elif line.startswith('cfn='):
        fn = name(line[4:].strip())
    elif line.startswith('calls=') and fn:
        n = int(line.split('=')[1].split()[0])
        if suffix and fn.endswith(suffix):
            calls += n
        elif fn.endswith('__rust_alloc'):
            allocs += n
    elif line.startswith('summary:') or line.startswith('totals:'):
        total = int(line.split()[1])
print(total, allocs, calls)
