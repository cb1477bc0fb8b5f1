#!/usr/bin/env python3
"""Structural facts of the code base, printed as Markdown:

- each extension trait (a trait with two or more implementors): its hooks and, per hook, the
  implementors that define it (a hook no implementor defines runs its default only);
- import circles: strongly connected components of the file-level `use` graph, within one folder
  (the layering rule of ARCHITECTURE.md) and across folders, for every crate root given;
- lines of the binary's package (cli/src: the `fpdb` command) and of the server's (serve/src), and
  the functions over a length (scripts/fn_lengths.py's brace counting).

    python3 scripts/facts.py                 # src, cli/src, serve/src, python/src
    python3 scripts/facts.py --over 60
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fn_lengths  # noqa: E402

COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"(\\.|[^"\\])*"')


def code_of(path):
    text = open(path, encoding="utf-8").read()
    return COMMENT.sub("", STRING.sub('""', text))


def rust_files(root):
    """The crate's files (each root is a crate of its own, its own `crate::`)."""
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)


def module_path(root, path):
    """`src/db/side/mod.rs` -> ('db', 'side'); the crate root file -> ()."""
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs dropped)."""
    tree = re.sub(r"\s+", "", tree)
    i = tree.find("{")
    if i < 0:
        return [re.sub(r"as\w+$", "", tree).rstrip(":*")]
    prefix, body = tree[:i], tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p in ("", "self"):
            out.append(prefix.rstrip(":"))
        elif p:
            out.extend(prefix + q for q in expand_use(p))
    return out


def references(code):
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        paths.extend(expand_use(m.group(1)))
    paths.extend(m.group(0) for m in re.finditer(r"\b(?:crate|super|self)(?:::\w+)+", code))
    return paths


def resolve(mod, path, modules):
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = mod
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    full = base + tuple(segs)
    for n in range(len(full), -1, -1):
        if full[:n] in modules:
            return full[:n]
    return None


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_circles(root):
    files = {module_path(root, p): p for p in rust_files(root)}
    graph = defaultdict(set)
    for mod, path in files.items():
        for ref in references(code_of(path)):
            target = resolve(mod, ref, files)
            if target is not None and target != mod and not mod[: len(target)] == target:
                graph[mod].add(target)

    def folder(m):
        return os.path.dirname(os.path.relpath(files[m], root))

    within = defaultdict(set)
    for a, targets in graph.items():
        for b in targets:
            if folder(a) == folder(b):
                within[a].add(b)
    name = lambda m: os.path.relpath(files[m], root)  # noqa: E731
    return ([[name(m) for m in c] for c in sccs(within)], [[name(m) for m in c] for c in sccs(graph)])


def extension_traits(root):
    traits = {}
    for path in rust_files(root):
        code = code_of(path)
        for m in re.finditer(r"\btrait\s+(\w+)[^{;]*\{", code):
            body = block(code, m.end() - 1)
            hooks = re.findall(r"\bfn\s+(\w+)", body)
            traits[m.group(1)] = (os.path.relpath(path, root), hooks)
    impls = defaultdict(dict)
    for path in rust_files(root):
        code = code_of(path)
        for m in re.finditer(r"\bimpl(?:<[^>]*>)?\s+(?:[\w:]+::)?(\w+)(?:<[^>]*>)?\s+for\s+([\w:<>', ]+?)\s*(?:where[^{]*)?\{", code):
            if m.group(1) in traits:
                body = block(code, m.end() - 1)
                impls[m.group(1)][m.group(2).strip()] = set(re.findall(r"\bfn\s+(\w+)", body))
    return {t: (traits[t], impls[t]) for t in traits if len(impls[t]) >= 2}


def block(code, open_at):
    depth = 0
    for i in range(open_at, len(code)):
        depth += code[i] == "{"
        depth -= code[i] == "}"
        if depth == 0:
            return code[open_at + 1 : i]
    return code[open_at + 1 :]


def main():
    over = 60
    if "--over" in sys.argv:
        over = int(sys.argv[sys.argv.index("--over") + 1])
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    roots = [r for r in ["src", "cli/src", "serve/src", "python/src"] if os.path.isdir(r)]

    print("## Extension traits (two or more implementors)\n")
    for root in roots:
        for t, ((where, hooks), impls) in sorted(extension_traits(root).items()):
            print(f"### `{t}` ({root}/{where}): {len(hooks)} hooks, {len(impls)} implementors\n")
            print("| hook | implementors that define it |\n|---|---|")
            for h in hooks:
                who = sorted(i for i, fns in impls.items() if h in fns)
                print(f"| `{h}` | {len(who)}: {', '.join(who) or '(default only)'} |")
            print()

    print("## Import circles\n")
    for root in roots:
        within, across = import_circles(root)
        print(f"- {root}: {len(within)} within a folder, {len(across)} across folders")
        for c in within:
            print(f"  - within: {' <-> '.join(c)}")
        for c in across:
            print(f"  - across: {' <-> '.join(c)}")

    print("\n## Size\n")
    for package in ["cli/src", "serve/src"]:
        lines = sum(sum(1 for _ in open(p, encoding="utf-8")) for p in rust_files(package)) if os.path.isdir(package) else 0
        what = "the binary's package, `fpdb`" if package == "cli/src" else "the server's package, `fpdb_serve`"
        print(f"- lines in {package} ({what}): {lines}")
    found = []
    for root in roots:
        for p in rust_files(root):
            found.extend(fn_lengths.functions(p))
    long = sorted((f for f in found if f[0] > over), reverse=True)
    print(f"- functions over {over} lines: {len(long)}")
    for n, path, line, name in long:
        print(f"  - {n} lines: {path}:{line} `{name}`")


if __name__ == "__main__":
    main()
