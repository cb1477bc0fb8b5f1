#!/usr/bin/env python3
"""Function lengths of Rust sources, by brace counting: `fn` items (with their doc comments left
out) from the line of `fn` to the line of the closing brace. Prints the longest first.

    python3 scripts/fn_lengths.py src/db src/index src/store [--over 80]
"""
import os
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")


def strip(line):
    """The line without string/char literals and // comments (good enough for brace counting)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        depth, start, opened = 0, i, False
        j = i
        while j < len(lines):
            s = strip(lines[j])
            if not opened and ";" in s and "{" not in s:
                break  # a declaration without a body
            for ch in s:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                out.append((j - start + 1, path, start + 1, m.group(7)))
                break
            j += 1
        i = start + 1
    return out


def main():
    args = sys.argv[1:]
    over = 0
    if "--over" in args:
        k = args.index("--over")
        over = int(args[k + 1])
        del args[k : k + 2]
    found = []
    for root in args:
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith(".rs"):
                    found.extend(functions(os.path.join(d, f)))
    found.sort(reverse=True)
    for n, p, line, name in found:
        if n > over:
            print(f"{n:5} {p}:{line} {name}")


if __name__ == "__main__":
    main()
