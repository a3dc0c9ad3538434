#!/usr/bin/env python3
"""No comment, doc or test of the repository cites a document a clone does
not have. The design decisions and the API contract live in docs/design.md
and docs/api.md; planning notes kept outside the repository (a design table,
an API write-up, research notes, reviews) must not be cited by their file
names or folders. Fails on any tracked file (or, outside git, any file of the
tree but build output) whose text names one of them."""
import os
import re
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("WASD_SOURCE_DIR") or os.path.join(HERE, "..", ".."))
# The documents of the planning notes, by the names the code used to cite.
ABSENT = re.compile(r"DESIGN\.md|WAS-API|(?<![\w-])research/|(?<![\w-])reviews/")
SELF = os.path.relpath(os.path.abspath(__file__), SRC)
SKIP_DIRS = {".git", "build", "build-image", "build-asan", "__pycache__"}


def RepositoryFiles():
    p = subprocess.run(["git", "-C", SRC, "ls-files", "-z"], capture_output=True, timeout=60)
    if p.returncode == 0 and p.stdout:
        return [f for f in p.stdout.decode().split("\0") if f]
    out = []
    for root, dirs, files in os.walk(SRC):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        out += [os.path.relpath(os.path.join(root, f), SRC) for f in files]
    return out


class NoAbsentCitations(unittest.TestCase):
    def test_no_file_cites_a_document_outside_the_repository(self):
        hits = []
        files = RepositoryFiles()
        self.assertGreater(len(files), 100)
        for rel in files:
            if rel == SELF:
                continue
            path = os.path.join(SRC, rel)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data[:8192]:
                continue  # binary
            for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if ABSENT.search(line):
                    hits.append(f"{rel}:{n}: {line.strip()[:120]}")
        self.assertEqual(hits, [], "cite docs/design.md or docs/api.md instead:\n" +
                         "\n".join(hits))

    def test_the_pattern_catches_what_it_must(self):
        for text in ("// see DESIGN.md Q12", "(WAS-API.md §b.0)", "WAS-API §c.1",
                     "research/gang-schedulers.md", "../shared/reviews/x.md"):
            self.assertTrue(ABSENT.search(text), text)
        for text in ("docs/design.md Q12", "docs/api.md §b.0", "a research note",
                     "code reviews found"):
            self.assertFalse(ABSENT.search(text), text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
