#!/usr/bin/env python3
"""The layering table (layers.txt) and the check that product code keeps to it.

  scripts/layers.py folders          the product folders, one per line (scripts/tidy.sh)
  scripts/layers.py check [ROOT]     every include of every product file against the
                                     table; exit 1 listing each violation
  scripts/layers.py tidy-regex       the HeaderFilterRegex .clang-tidy must carry

A quoted include "folder/file.h" names a folder; a pure folder may also not include
Boost or OpenSSL (angle includes). Files outside the table's folders
(tests/, tools/, scripts/) are not checked.
"""
import os
import re
import sys

# Angle includes a pure folder may not use: Boost (its network stack above all) and OpenSSL.
IO_HEADERS = re.compile(r"#\s*include\s*<(boost/|openssl/)")
QUOTED = re.compile(r'#\s*include\s*"([a-z_]+)/[^"]+"')


def ReadTable(root):
    """{folder: (kind, set of folders it may include)}, in table order."""
    table = {}
    with open(os.path.join(root, "layers.txt"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) < 2 or line[1] not in ("pure", "io", "main"):
                raise SystemExit(f"layers.txt:{n}: want 'folder kind [may include...]'")
            table[line[0]] = (line[1], set(line[2:]))
    for folder, (_, deps) in table.items():
        unknown = deps - set(table)
        if unknown:
            raise SystemExit(f"layers.txt: {folder} may include unknown folder(s) {sorted(unknown)}")
    return table


def Violations(root, table=None):
    """Every include that breaks the table, as 'file:line: message'."""
    table = table or ReadTable(root)
    out = []
    for folder, (kind, deps) in table.items():
        base = os.path.join(root, folder)
        if not os.path.isdir(base):
            out.append(f"{folder}/: in layers.txt but not in the tree")
            continue
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = QUOTED.search(line)
                        if m and m.group(1) != folder and m.group(1) in table \
                                and m.group(1) not in deps:
                            out.append(f"{rel}:{n}: {folder} may not include {m.group(1)}/ "
                                       f"(layers.txt: {folder} may include "
                                       f"{', '.join(sorted(deps)) or 'nothing'})")
                        if kind == "pure" and IO_HEADERS.search(line):
                            out.append(f"{rel}:{n}: {folder} is pure and may not include "
                                       f"{line.strip()[len('#include '):]}")
    return out


def TidyRegex(table):
    folders = [f for f, (kind, _) in table.items() if kind != "main"]
    return "(" + "|".join(folders) + r")/.*\.h$"


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    cmd = argv[1]
    if cmd == "folders":
        print("\n".join(ReadTable(root)))
        return 0
    if cmd == "tidy-regex":
        print(TidyRegex(ReadTable(root)))
        return 0
    if cmd == "check":
        root = argv[2] if len(argv) > 2 else root
        bad = Violations(root)
        for v in bad:
            print(v)
        print(f"layers: {len(bad)} violation(s)" if bad else "layers: clean")
        return 1 if bad else 0
    print(f"layers.py: unknown command {cmd!r} (see --help)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
