#!/usr/bin/env python3
"""Fails when the top-level modules of a crate's src/ depend on one another in a cycle.

usage: module-cycles.py CRATE_SRC_DIR

A module depends on another when any of its files (outside `#[cfg(test)]` code) names
`crate::<other>`, including inside grouped imports such as `use crate::{a, b::C}`. Every cycle
is printed with one file:line for each of its edges, so the fix is easy to find. The layers the
runtime keeps are drawn in docs/architecture.md.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "runtime/src"
modules = set()
for name in os.listdir(root):
    path = os.path.join(root, name)
    if name.endswith(".rs") and name not in ("lib.rs", "main.rs"):
        modules.add(name[:-3])
    elif os.path.isdir(path):
        modules.add(name)

direct = re.compile(r"\bcrate::(\w+)")
grouped = re.compile(r"\bcrate::\{([^}]*)\}")


def files_of(module):
    path = os.path.join(root, module)
    if os.path.isfile(path + ".rs"):
        yield path + ".rs"
    if os.path.isdir(path):
        for folder, _, names in os.walk(path):
            for n in sorted(names):
                if n.endswith(".rs"):
                    yield os.path.join(folder, n)


def is_test_file(path):
    # `mod tests;` files: the whole file is test code when its parent declares it so.
    return os.path.basename(path) == "tests.rs"


edges = {m: {} for m in modules}  # module -> {dependency: "file:line"}
for module in modules:
    for path in files_of(module):
        if is_test_file(path):
            continue
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if text.startswith("//"):
                continue
            following = lines[number].strip() if number < len(lines) else ""
            if text.startswith("#[cfg(test)]") and following.startswith("mod "):
                break  # an inline test module: the rest of the file is test code
            names = [m.group(1) for m in direct.finditer(line)]
            for group in grouped.finditer(line):
                names += [p.strip().split("::")[0] for p in group.group(1).split(",")]
            for dep in names:
                if dep in modules and dep != module:
                    edges[module].setdefault(dep, f"{path}:{number}")

# Tarjan's strongly connected components.
index, low, on_stack, stack, components = {}, {}, set(), [], []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        component = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            component.append(w)
            if w == v:
                break
        components.append(sorted(component))


sys.setrecursionlimit(10_000)
for m in sorted(modules):
    if m not in index:
        visit(m)

cycles = [c for c in components if len(c) > 1]
for c in cycles:
    print(f"cycle between {', '.join(c)}:")
    for a in c:
        for b, at in sorted(edges[a].items()):
            if b in c:
                print(f"  {a} -> {b}  ({at})")
print(f"{len(modules)} top-level modules in {root}; {len(cycles)} cycle(s)")
sys.exit(1 if cycles else 0)
