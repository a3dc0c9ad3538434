#!/usr/bin/env python3
"""The documentation tree docs/ as a newcomer uses it.

- Every page under docs/ is linked from the index, docs/README.md.
- Every relative link of docs/, README.md and charts/wasd/README.md points
  at a file that exists, and an anchor (#...) at a heading of that file.
- Every command of every shell block (```sh, bash, shell, console) in docs/
  that can run on a build machine runs, from the repository root, and exits
  as the page says: 0, or N when the line ends with `# exits N`. A block
  whose info string has a second word (```sh cluster, ```sh server,
  ```sh slow) is not run; a page that says `<!-- docs-test: cluster -->`
  runs only its ```sh offline blocks. docs/README.md explains the markers.
  kubectl runs against the test API server with `wasd webhook` registered
  (the fixtures of test_readme_commands.py); `build/wasd` is $WASD_BIN. An
  unlabelled block right after a shell block is its output: each line must
  appear in what the block's last command printed. Paths /tmp/wasd-* are
  this test's temporary directory.
- docs/reference/flags.md is what scripts/gen_flags_doc.py makes from the
  binary's --help now.
- The exit-code table of docs/reference/cli.md is what the binary does: a
  usage error, no client configuration (on every command that talks to a
  cluster: $KUBECONFIG naming a missing file, no in-cluster environment),
  an unknown --context, `wasd check` of a denied and of an allowed example
  each exit with the code of the table's row that names that case.
- docs/life-of-a-review.md and docs/life-of-a-reconcile.md name files and
  functions that exist: every `path` they cite is a file, and every
  `Function` cited in the same step (or the step before) appears in one
  of those files or their headers.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("WASD_SOURCE_DIR") or os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("WASD_BUILD_DIR") or os.path.join(SRC, "build"))
WASD = os.path.abspath(os.environ.get("WASD_BIN") or os.path.join(BUILD, "wasd"))
DOCS = os.path.join(SRC, "docs")
SHELL_LANGS = {"sh", "bash", "shell", "console"}
TIMEOUT_S = 60

_spec = importlib.util.spec_from_file_location(
    "readme_commands", os.path.join(HERE, "test_readme_commands.py"))
readme = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme)

FENCE = re.compile(r"^( {0,3})```([\w+-]*)([^\n]*)\n(.*?)^ {0,3}```[ \t]*$", re.M | re.S)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
EXITS = re.compile(r"\s+#\s*exits\s+(\d+)\b.*$")


def DocPages():
    pages = []
    for root, _, files in os.walk(DOCS):
        pages += [os.path.join(root, f) for f in files if f.endswith(".md")]
    return sorted(pages)


def Rel(path):
    return os.path.relpath(path, SRC)


def Read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def WithoutCode(text):
    """The text with fenced blocks and inline code blanked (links in code are not links)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return re.sub(r"`[^`\n]*`", "``", text)


def Slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def Anchors(path):
    text = FENCE.sub("", Read(path))
    return {Slug(re.sub(r"[`*]", "", m.group(1))) for m in re.finditer(r"(?m)^#+ (.*)$", text)}


def Links(path):
    """(line, target) of every relative link in a Markdown file."""
    text = WithoutCode(Read(path))
    out = []
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        out.append((text.count("\n", 0, m.start()) + 1, target))
    return out


class Block:
    def __init__(self, doc, line, lang, marker, body):
        self.doc, self.line, self.lang, self.marker, self.body = doc, line, lang, marker, body
        self.output = None


def Blocks(path):
    text = Read(path)
    page_needs_cluster = "<!-- docs-test: cluster -->" in text
    blocks, previous, previous_end = [], None, None
    for m in FENCE.finditer(text):
        lang, rest = m.group(2).lower(), m.group(3).split()
        line = text.count("\n", 0, m.start()) + 1
        if lang in SHELL_LANGS:
            marker = rest[0] if rest else None
            if page_needs_cluster and marker is None:
                marker = "cluster"
            if marker == "offline":
                marker = None
            # An indented fence (in a list): its lines carry the indent.
            body = "\n".join(l[len(m.group(1)):] if l.startswith(m.group(1)) else l
                             for l in m.group(4).split("\n"))
            block = Block(Rel(path), line, lang, marker, body)
            blocks.append(block)
            previous, previous_end = block, m.end()
            continue
        if lang == "" and previous is not None and text[previous_end:m.start()].strip() == "":
            previous.output = [l for l in m.group(4).split("\n") if l.strip()]
        previous = None
    return blocks


class DocsTree(unittest.TestCase):
    def test_index_links_every_page(self):
        index = os.path.join(DOCS, "README.md")
        linked = set()
        for _, target in Links(index):
            path = os.path.normpath(os.path.join(DOCS, target.split("#")[0]))
            linked.add(path)
        missing = [Rel(p) for p in DocPages() if p != index and p not in linked]
        self.assertEqual(missing, [], "pages under docs/ that docs/README.md does not link")

    def test_links_resolve(self):
        files = DocPages() + [os.path.join(SRC, "README.md"),
                              os.path.join(SRC, "charts", "wasd", "README.md")]
        self.assertGreater(len(files), 10)
        for path in files:
            for line, target in Links(path):
                with self.subTest(where=f"{Rel(path)}:{line}", link=target):
                    file_part, _, anchor = target.partition("#")
                    dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                        if file_part else path
                    self.assertTrue(os.path.exists(dest), f"{Rel(path)}:{line}: {target}: no such file")
                    if anchor and dest.endswith(".md"):
                        self.assertIn(anchor, Anchors(dest),
                                      f"{Rel(path)}:{line}: {target}: no such heading")

    def test_readme_links_the_docs_index(self):
        self.assertIn("docs/README.md", [t for _, t in Links(os.path.join(SRC, "README.md"))])


class DocsCommands(unittest.TestCase):
    def test_every_offline_command_runs(self):
        if not os.path.exists(WASD):
            self.skipTest(f"no wasd binary at {WASD} (run through ctest)")
        tmp = tempfile.mkdtemp(prefix="wasd-docs-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fixtures = readme.Fixtures(tmp)
        self.addCleanup(fixtures.StopAll)
        report, ran = [], 0
        for page in DocPages():
            for block in Blocks(page):
                commands = readme.CommandsOf(block.doc, block.line, block.lang, block.body)
                if block.marker:
                    for c in commands:
                        report.append((c.where(), c.text, f"not run: marked {block.marker}"))
                    continue
                last = None
                for c in commands:
                    raw = c.text
                    m = EXITS.search(self.RawLine(block, c))
                    expected = int(m.group(1)) if m else 0
                    if raw.startswith("cd "):
                        self.fail(f"{c.where()}: `cd` in a runnable block; mark the block")
                    if raw.startswith("kubectl "):
                        fixtures.Cluster()
                    # /tmp/wasd-* in the docs: this test's own directory.
                    command = readme.Substitute(raw, tmp).replace("/tmp/wasd-", tmp + "/wasd-")
                    rc, out, elapsed = readme.ReadmeCommands.Run(command, SRC, fixtures.Env(),
                                                                 TIMEOUT_S)
                    ran += 1
                    report.append((c.where(), raw, f"ran: exit {rc} in {elapsed:.1f} s"))
                    last = (c, out)
                    with self.subTest(command=raw, where=c.where()):
                        self.assertLess(rc, 128, f"{c.where()}: `{raw}` died or timed out:\n{out[-3000:]}")
                        self.assertEqual(rc, expected, f"{c.where()}: `{raw}`:\n{out[-3000:]}")
                if block.output and last is not None:
                    c, out = last
                    for line in block.output:
                        with self.subTest(output_of=c.text, where=c.where()):
                            self.assertIn(line.strip(), out,
                                          f"{block.doc}: the output shown after `{c.text}` is not "
                                          "what it prints")
        self.assertGreater(ran, 5, "the docs run almost no command: are the markers right?")
        width = max(len(w) for w, _, _ in report)
        print("\ndocs commands:", file=sys.stderr)
        for where, text, what in report:
            print(f"  {where:<{width}}  {text}\n  {'':<{width}}    -> {what}", file=sys.stderr)

    @staticmethod
    def RawLine(block, command):
        """The command's last source line, with its comment (CommandsOf drops it)."""
        lines = block.body.split("\n")
        i = command.line - block.line - 1
        while i < len(lines) - 1 and lines[i].rstrip().endswith("\\"):
            i += 1
        return lines[i] if 0 <= i < len(lines) else ""


class FlagsReference(unittest.TestCase):
    def test_generated_page_is_current(self):
        if not os.path.exists(WASD):
            self.skipTest(f"no wasd binary at {WASD} (run through ctest)")
        p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gen_flags_doc.py"),
                            "--wasd", WASD, "--check", os.path.join(DOCS, "reference", "flags.md")],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


class ExitCodes(unittest.TestCase):
    """docs/reference/cli.md's exit-code table against real runs of the binary."""

    ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|", re.M)

    def Table(self):
        text = Read(os.path.join(DOCS, "reference", "cli.md"))
        section = text.split("## Exit codes", 1)
        self.assertEqual(len(section), 2, "cli.md has no '## Exit codes' section")
        body = section[1].split("\n## ", 1)[0]
        rows = {int(code): meaning for code, meaning in self.ROW.findall(body)}
        self.assertEqual(sorted(rows), [0, 1, 2, 3], rows)
        return rows

    def CodeFor(self, rows, phrase):
        """The code of the one row whose meaning names `phrase`."""
        codes = [code for code, meaning in rows.items() if phrase in meaning]
        self.assertEqual(len(codes), 1, f"cli.md: {len(codes)} exit-code rows name {phrase!r}")
        return codes[0]

    def test_the_table_is_what_the_binary_does(self):
        if not os.path.exists(WASD):
            self.skipTest(f"no wasd binary at {WASD} (run through ctest)")
        rows = self.Table()
        self.assertIn("pending", rows[3])
        tmp = tempfile.mkdtemp(prefix="wasd-exit-")
        self.addCleanup(shutil.rmtree, tmp, True)
        # No client configuration: $KUBECONFIG names a missing file, no in-cluster
        # environment, a HOME without ~/.kube/config.
        no_config = {k: v for k, v in os.environ.items()
                     if not k.startswith("KUBERNETES_SERVICE_")}
        no_config.update(KUBECONFIG=os.path.join(tmp, "missing"), HOME=tmp)
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:  # a valid file without the context asked for
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: a\n"
                    "clusters: [{name: a, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                    "contexts: [{name: a, context: {cluster: a}}]\n")
        examples = os.path.join(SRC, "examples")
        cases = [
            ("usage error", ["explain", "--no-such-flag"], None, "unknown flag"),
            ("usage error", ["selftest", "--request-timeout", "90"], None, "missing unit"),
            ("usage error", ["check"], None, "no manifests given"),
            ("no client configuration", ["explain", "deployment/web"], no_config, "names no existing file"),
            ("no client configuration", ["selftest"], no_config, "names no existing file"),
            ("no client configuration", ["migrate", "deployment/web"], no_config, "names no existing file"),
            ("no client configuration", ["certs", "uninstall", "--webhook-config=w"], no_config,
             "names no existing file"),
            ("no client configuration", ["explain", "deployment/web", "--kubeconfig", kubeconfig,
                                         "--context", "staging"], None,
             f'--kubeconfig {kubeconfig}: context "staging" does not exist'),
            ("denied", ["check", "-f", os.path.join(examples, "bad-h1-mincount-over-replicas.yaml")],
             None, "denied"),
            ("success", ["check", "-f", os.path.join(examples, "kep-2-user-mincount.yaml")], None, ""),
        ]
        for phrase, args, env, says in cases:
            want = self.CodeFor(rows, phrase)
            with self.subTest(args=args, row=phrase):
                p = subprocess.run([WASD, *args], capture_output=True, text=True,
                                   timeout=TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)
                self.assertEqual(p.returncode, want, f"wasd {' '.join(args)}:\n{p.stdout}{p.stderr}")
                self.assertIn(says, p.stdout + p.stderr)


class LifePages(unittest.TestCase):
    PATH = re.compile(r"`((?:[a-z_]+/)+[a-z_]+\.(?:cc|h|py))`")
    NAME = re.compile(r"`(?:[a-z_]+::)?([A-Z][A-Za-z]+(?:::[A-Z][A-Za-z]+)?)`")

    def test_cited_files_and_functions_exist(self):
        for page in ("life-of-a-review.md", "life-of-a-reconcile.md"):
            text = FENCE.sub("", Read(os.path.join(DOCS, page)))
            # One step: a numbered item, or a paragraph.
            steps = re.split(r"\n(?=\d+\. )|\n\n", text)
            cited = 0
            previous = []
            for step in steps:
                paths = self.PATH.findall(step)
                for p in paths:
                    with self.subTest(page=page, file=p):
                        self.assertTrue(os.path.isfile(os.path.join(SRC, p)), f"{page}: {p}")
                # A step continues the one before it: the files of both count.
                here = [os.path.join(SRC, p) for p in paths if os.path.isfile(os.path.join(SRC, p))]
                existing, previous = here + previous, here or previous
                if not existing:
                    continue
                sources = ""
                for p in existing:
                    sources += Read(p)
                    header = p[:-3] + ".h" if p.endswith(".cc") else None
                    if header and os.path.isfile(header):
                        sources += Read(header)
                for name in self.NAME.findall(step):
                    function = name.split("::")[-1]
                    if function in ("Result", "Action", "Api", "Event", "Events"):
                        continue  # types named in prose
                    cited += 1
                    with self.subTest(page=page, name=name):
                        self.assertTrue(function in sources,
                                        f"{page}: `{name}` is not in {', '.join(map(Rel, existing))}")
            self.assertGreater(cited, 10, page)


if __name__ == "__main__":
    unittest.main(verbosity=2)
