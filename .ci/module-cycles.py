#!/usr/bin/env python3
"""Fails when modules of a crate depend on one another in a cycle, at any depth.

usage: module-cycles.py CRATE_SRC_DIR

Every module with children (the crate root, `pipeline/`, `pipeline/handlers/`, ...) is checked on
its own: its children are the nodes, and child A depends on child B when a file inside A
(outside `#[cfg(test)]` code and `tests.rs` files) names an item inside B, through `crate::`,
`super::` or `self::` paths, grouped imports such as `use super::{a, b::C}` included. A module
using its own descendants or ancestors is no edge. Every cycle is printed with one file:line for
each of its edges, so the fix is easy to find. The layers the runtime keeps are drawn in
docs/architecture.md.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "runtime/src"

def module_path(path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel

def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(l.split("//")[0] if not l.strip().startswith("//") else "" for l in text.splitlines())

def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "{": depth += 1
        if ch == "}": depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur); cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]

def expand(tree):
    # tree like "a::b::{c, d::{e}}" -> [[a,b,c],[a,b,d,e]]
    tree = tree.strip()
    m = re.match(r"^((?:\w+::)*)\{(.*)\}$", tree, re.S)
    if m:
        prefix = [p for p in m.group(1).split("::") if p]
        out = []
        for part in split_top(m.group(2)):
            for tail in expand(part):
                out.append(prefix + tail)
        return out or [prefix]
    seg = re.split(r"\s+as\s+", tree)[0]
    return [[p for p in seg.split("::") if p and p != "*"]]

token = re.compile(r"\b(crate|super|self)::((?:\w+::)*(?:\{|\w+))")

def paths_in(text):
    out = []
    i = 0
    while True:
        m = token.search(text, i)
        if not m: break
        start = m.start(2)
        j = start
        # read path with balanced braces
        depth = 0
        while j < len(text):
            ch = text[j]
            if ch == "{": depth += 1
            elif ch == "}":
                if depth == 0: break
                depth -= 1
            elif depth == 0 and not (ch.isalnum() or ch in "_:"):
                break
            j += 1
        tree = text[start:j]
        for p in expand(tree):
            out.append((m.group(1), p, text.count("\n", 0, m.start()) + 1))
        i = max(j, m.end())
    return out

files = []
for folder, _, names in os.walk(root):
    for n in names:
        if n.endswith(".rs") and n != "tests.rs":
            files.append(os.path.join(folder, n))

edges = {}  # parent tuple -> {child: {dep: at}}
for path in files:
    mod = module_path(path)
    is_mod_file = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", text)
    if cut: text = text[:cut.start()]
    text = strip_comments(text)
    for kind, p, line in paths_in(text):
        if kind == "crate":
            target = p
        else:
            base = mod
            if kind == "super":
                base = base[:-1]
                while p and p[0] == "super":
                    base = base[:-1]; p = p[1:]
            target = base + p
        # common ancestor: the edge lies between two children of the longest common prefix
        k = 0
        while k < len(mod) and k < len(target) and mod[k] == target[k]:
            k += 1
        if k >= len(mod) or k >= len(target):
            continue  # one contains the other: a parent using its child or a child its ancestor
        parent = tuple(mod[:k])
        a, b = mod[k], target[k]
        edges.setdefault(parent, {}).setdefault(a, {}).setdefault(b, f"{path}:{line}")

def sccs(graph):
    index, low, on, st, comps = {}, {}, set(), [], []
    def visit(v):
        index[v] = low[v] = len(index); st.append(v); on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = st.pop(); on.discard(w); c.append(w)
                if w == v: break
            comps.append(sorted(c))
    nodes = set(graph) | {w for v in graph.values() for w in v}
    for v in sorted(nodes):
        if v not in index: visit(v)
    return [c for c in comps if len(c) > 1]

total = 0
for parent in sorted(edges):
    for c in sccs(edges[parent]):
        total += 1
        where = "::".join(parent) or "crate"
        print(f"cycle in {where} between {', '.join(c)}:")
        for a in c:
            for b, at in sorted(edges[parent].get(a, {}).items()):
                if b in c: print(f"  {a} -> {b}  ({at})")
print(f"{len(files)} files in {root}; {total} cycle(s) at any depth")
sys.exit(1 if total else 0)
