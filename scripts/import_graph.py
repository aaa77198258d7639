#!/usr/bin/env python3
"""File-level import graph of one Rust crate, and its cycles.

usage: import_graph.py CRATE/src [--edges] [--resolve-reexports] [--layers "A B | C D | ..."]

An edge a -> b means: file a names a path (in a `use` or in code) `crate::...`, `super::...`,
`self::...`, or a child module declared in a, that resolves to the module whose file is b.
The path resolves to the deepest module that has its own file (inline modules such as
`mod tests { .. }` belong to their file). `mod x;` declarations are containment, not imports.
Paths that stop at a facade (`crate::Name` via lib.rs, `super::Name` via mod.rs) point at
the facade file: a re-export is an import of the file that re-exports.
With --resolve-reexports, a path that stops at a file that does not define the name it names
but brings it in with a `use` (`pub use error::Error`, `use self::x::*`, aliases with `as`)
follows that `use` to the file that defines the name (the design graph); a name re-exported
from another crate then imports no file of this crate.
Comments, doc comments and string literals are ignored.
Prints every edge (with --edges), then the pairs of files that import each other and the
strongly connected components of size > 1 (the import circles), and exits 1 if there is any.
With --layers (layers bottom first, separated by `|`; each a list of files or folders ending in
`/`, relative to CRATE/src), also every import from a lower layer to a higher one and every file
in no layer, and exits 1 if there is any.
"""
import os
import re
import sys


def strip(src):
    """Removes comments, strings and char literals (keeps newlines and braces of code)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r(#*)"', src[i:]) and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', src[i:]).group(1)
            end = src.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", src[i:])
            if m:
                i += len(m.group(0))
                out.append("' '")
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def modules(src_dir):
    """Maps module path (tuple) -> file, for every file module of the crate."""
    mods = {}
    for root, _, files in os.walk(src_dir):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src_dir)
            parts = rel[:-3].split(os.sep)
            if parts == ["lib"] or parts == ["main"]:
                key = ()
            elif parts[-1] == "mod":
                key = tuple(parts[:-1])
            else:
                key = tuple(parts)
            mods[key] = rel
    return mods


PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:\s*::\s*(?:[A-Za-z_][A-Za-z0-9_]*|\*|\{))+)")
INLINE_MOD = re.compile(r"\bmod\s+([a-z_][a-z0-9_]*)\s*\{")
DECL_MOD = re.compile(r"\bmod\s+([a-z_][a-z0-9_]*)\s*;")


def expand(text, start):
    """Expands the use-tree whose `{` is at text[start]: returns list of segment lists and end."""
    items, cur, i, depth = [], "", start + 1, 1
    while i < len(text):
        c = text[i]
        if c == "{":
            # nested group: prefix is cur
            sub, i = expand(text, i)
            prefix = [s for s in re.split(r"\s*::\s*", cur.strip()) if s]
            items.extend(prefix + s for s in sub)
            cur = None
            continue
        if c == "}" or c == ",":
            if cur is not None and cur.strip():
                items.append([s for s in re.split(r"\s*::\s*", re.sub(r"\s+as\s+\w+", "", cur.strip())) if s])
            cur = ""
            if c == "}":
                return items, i + 1
        else:
            if cur is not None:
                cur += c
        i += 1
    return items, i


def paths_with_scope(code):
    """Yields (inline module scope list, segment list) for every path in the stripped code."""
    # inline module scopes by brace depth
    scopes = []  # (name, depth at which it closes)
    depth = 0
    events = []  # positions of inline mod openings
    inline = {m.end() - 1: m.group(1) for m in INLINE_MOD.finditer(code)}
    scope_at = []
    for i, c in enumerate(code):
        if c == "{":
            depth += 1
            if i in inline:
                scopes.append((inline[i], depth))
        elif c == "}":
            if scopes and scopes[-1][1] == depth:
                scopes.pop()
            depth -= 1
        scope_at.append(tuple(s for s, _ in scopes))
    for m in PATH.finditer(code):
        text = m.group(1)
        head = [s for s in re.split(r"\s*::\s*", text) if s]
        scope = scope_at[m.start()] if m.start() < len(scope_at) else ()
        if head[-1] == "{":
            sub, _ = expand(code, m.end() - 1)
            for s in sub:
                yield scope, head[:-1] + s
        else:
            yield scope, head


def resolve(mods, base, segs, children, with_rest=False):
    """Resolves segs from module `base`; returns the module key of the deepest file module
    (with with_rest, also the segments after it)."""
    cur = list(base)
    first = segs[0]
    if first == "crate":
        cur, rest = [], segs[1:]
    elif first in ("super", "self"):
        rest = segs
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                if not cur:
                    return None
                cur = cur[:-1]
            rest = rest[1:]
    elif first in children.get(tuple(base), set()):
        rest = segs
    else:
        return None  # an external crate, a local enum, a std path
    best, after = tuple(cur), 0
    for i, s in enumerate(rest):
        cand = tuple(cur) + (s,)
        if any(k[: len(cand)] == cand for k in mods):
            cur = list(cand)
            if cand in mods:
                best, after = cand, i + 1
        else:
            break
    if with_rest:
        return best, rest[after:]
    return best


USE = re.compile(r"\buse\s+([^;]+);")
DEFINES = r"\b(?:fn|struct|enum|trait|type|const|static|union|mod|macro_rules\s*!)\s+{}\b"


def use_tree(text):
    """Expands a use tree (the text between `use` and `;`): [(segments, bound name)]."""
    out = []

    def walk(prefix, t):
        t = t.strip()
        if not t:
            return
        if t.endswith("}") and "{" in t:
            i = t.index("{")
            pre = [x for x in re.split(r"\s*::\s*", t[:i].strip()) if x]
            inner, depth, cur = t[i + 1:-1], 0, ""
            for c in inner + ",":
                if c == "," and depth == 0:
                    walk(prefix + pre, cur)
                    cur = ""
                    continue
                depth += (c == "{") - (c == "}")
                cur += c
            return
        m = re.match(r"(.*?)\s+as\s+(\w+)$", t, re.S)
        path, alias = (m.group(1), m.group(2)) if m else (t, None)
        segs = prefix + [x for x in re.split(r"\s*::\s*", path.strip()) if x]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        if segs:
            out.append((segs, alias or segs[-1]))

    walk([], text)
    return out


def top_level_uses(code):
    """The `use` trees of a file outside its inline modules and bodies: [(segments, bound name)]."""
    depth_at, depth = [], 0
    for c in code:
        depth_at.append(depth)
        depth += (c == "{") - (c == "}")
    out = []
    for m in USE.finditer(code):
        if depth_at[m.start()] == 0:
            out.extend(use_tree(m.group(1)))
    return out


def follow(mods, codes, children, key, rest, seen=()):
    """The file module that defines `rest[0]` as seen from file module `key`, following its
    `use`s; None for a name from another crate; key when it is defined there (or unknown)."""
    if not rest or rest[0] in ("self", "*", "{") or key in seen or key not in codes:
        return key
    name, code, seen = rest[0], codes[key], seen + (key,)
    if re.search(DEFINES.format(re.escape(name)), code):
        return key
    uses = top_level_uses(code)
    for segs, bound in uses:
        if bound != name or segs[-1] == "*":
            continue
        hit = resolve(mods, key, segs, {key: children[key]}, with_rest=True)
        if hit is None:
            return None  # from another crate
        target, more = hit
        while target not in mods:
            target = target[:-1]
        return follow(mods, codes, children, target, more + rest[1:], seen)
    for segs, _ in uses:  # glob re-exports: the first module that has the name
        if segs[-1] != "*":
            continue
        hit = resolve(mods, key, segs[:-1], {key: children[key]}, with_rest=True)
        if hit is None or hit[1]:
            continue
        target = hit[0]
        if target in codes and target != key:
            found = follow(mods, codes, children, target, rest, seen)
            if found != target or re.search(DEFINES.format(re.escape(name)), codes[target]):
                return found
    return key


def graph(src_dir, reexports=False):
    mods = modules(src_dir)
    children = {}
    codes = {}
    for key, rel in mods.items():
        code = strip(open(os.path.join(src_dir, rel), encoding="utf-8").read())
        codes[key] = code
        children[key] = set(DECL_MOD.findall(code)) | set(INLINE_MOD.findall(code))
    edges = set()
    for key, code in codes.items():
        for scope, segs in paths_with_scope(code):
            base = key + scope
            # children of an inline scope: only inline mods (approximation); of the file: declared mods
            kids = {key + scope: children[key] if not scope else set()}
            hit = resolve(mods, base, segs, kids, with_rest=True)
            if hit is None:
                continue
            target, rest = hit
            # an inline module resolves to its file
            while target not in mods:
                target = target[:-1]
            if reexports and target != key:
                target = follow(mods, codes, children, target, rest)
                if target is None:
                    continue
            if target != key:
                edges.add((mods[key], mods[target]))
    return sorted(mods.values()), sorted(edges)


def sccs(nodes, edges):
    adj = {n: [] for n in nodes}
    for a, b in edges:
        adj[a].append(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for n in nodes:
        if n not in index:
            visit(n)
    return [c for c in out if len(c) > 1]


def layer_of(spec, f):
    """The layer (0 = bottom) of file f under spec, or None; the longest matching entry wins."""
    best, best_len = None, -1
    for i, entries in enumerate(spec):
        for e in entries:
            hit = f.startswith(e) if e.endswith("/") else f == e
            if hit and len(e) > best_len:
                best, best_len = i, len(e)
    return best


def main():
    args = sys.argv[1:]
    src = args[0]
    nodes, edges = graph(src, reexports="--resolve-reexports" in args)
    if "--edges" in args:
        for a, b in edges:
            print(f"{a} -> {b}")
    back = sorted({tuple(sorted((a, b))) for a, b in edges if (b, a) in set(edges)})
    comps = sccs(nodes, edges)
    print(f"{src}: {len(nodes)} files, {len(edges)} import edges, "
          f"{len(back)} pairs importing each other, {len(comps)} circles")
    for a, b in back:
        print(f"  mutual: {a} <-> {b}")
    for c in comps:
        print(f"  circle of {len(c)}: {' '.join(c)}")
    bad = bool(comps)
    if "--layers" in args:
        spec = [part.split() for part in args[args.index("--layers") + 1].split("|")]
        loose = [n for n in nodes if layer_of(spec, n) is None]
        up = [(a, b) for a, b in edges
              if None not in (layer_of(spec, a), layer_of(spec, b))
              and layer_of(spec, a) < layer_of(spec, b)]
        print(f"layers: {len(spec)}, {len(up)} upward imports, {len(loose)} files in no layer")
        for n in range(len(spec)):
            print(f"  {n + 1}: {' '.join(x for x in nodes if layer_of(spec, x) == n)}")
        for a, b in up:
            print(f"  upward: {a} (layer {layer_of(spec, a) + 1}) -> {b} (layer {layer_of(spec, b) + 1})")
        for n in loose:
            print(f"  in no layer: {n}")
        bad = bad or bool(up) or bool(loose)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
