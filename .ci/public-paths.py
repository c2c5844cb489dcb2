#!/usr/bin/env python3
"""Fail when an item of a crate's public API can be named by more than one public path.

    public-paths.py <rustdoc JSON of the crate>...

Reads rustdoc's JSON output (what `.ci/public-api.sh` builds), walks the public modules from the
crate root, follows every `pub use` (glob or not) to the item it names, and collects, for each
item the crate defines, the paths a user can write for it. An item with two paths is an item with
two homes: two places its documentation and its semver promise live, and two spellings in users'
code. Each item gets one.

The one exception is `prelude`: a module that only re-exports, for `use crate::prelude::*`, is a
second path by design (as `std::prelude` is). Paths through `#[doc(hidden)]` modules such as
`__private` (code the macros generate) are not public API and are not walked.

Exit status: 0 when every item has one path, 1 otherwise (each offender printed with its paths).
"""
import json
import sys

# Kinds that have a path of their own; associated items (methods, fields, variants) follow their
# parent and are not counted.
NAMED = {"module", "struct", "enum", "union", "trait", "trait_alias", "function", "type_alias",
         "constant", "static", "macro", "proc_macro", "primitive"}


def kind_of(item):
    inner = item["inner"]
    return next(iter(inner)) if isinstance(inner, dict) else inner


def paths_of(doc):
    index = doc["index"]
    root = doc["root"]
    local_crate = index[str(root)]["crate_id"] if "crate_id" in index[str(root)] else 0
    found = {}  # item id → set of paths

    def visit(module_id, prefix, seen):
        if module_id in seen:  # a glob re-export of an ancestor
            return
        seen = seen | {module_id}
        module = index.get(str(module_id))
        if module is None:
            return
        for child in module["inner"]["module"]["items"]:
            item = index.get(str(child))
            if item is None:
                continue
            kind = kind_of(item)
            if kind == "use":
                use = item["inner"]["use"]
                target = use.get("id")
                if target is None or str(target) not in index:
                    continue  # an item of another crate
                if index[str(target)].get("crate_id", 0) != local_crate:
                    continue
                if use.get("is_glob"):
                    if kind_of(index[str(target)]) == "module":
                        visit(target, prefix, seen)
                    continue
                name = use["name"]
                record(target, prefix + [name], seen)
            else:
                name = item.get("name")
                if name is None:
                    continue
                record(child, prefix + [name], seen)

    def record(item_id, path, seen):
        item = index[str(item_id)]
        if any(part.startswith("__") for part in path):
            return
        kind = kind_of(item)
        if kind not in NAMED:
            return
        found.setdefault(item_id, set()).add("::".join(path))
        if kind == "module":
            visit(item_id, path, seen)

    crate_name = index[str(root)]["name"]
    visit(root, [crate_name], frozenset())
    return found


def main(files):
    failed = False
    for file in files:
        with open(file) as f:
            doc = json.load(f)
        found = paths_of(doc)
        offenders = []
        for item_id, paths in found.items():
            outside = sorted(p for p in paths if "::prelude::" not in p + "::" or p.endswith("::prelude"))
            outside = [p for p in outside if "::prelude::" not in p]
            if len(outside) > 1:
                offenders.append(outside)
        for paths in sorted(offenders):
            print(f"{file}: one item, {len(paths)} public paths: {', '.join(paths)}")
        failed |= bool(offenders)
        total = len(found)
        print(f"{file}: {total} public items, {len(offenders)} with more than one path", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
