#!/usr/bin/env python3
"""Runs the shell commands that README.md and charts/wasd/README.md show.
(The pages under docs/ are run by test_docs.py, with these fixtures.)

Every fenced ```sh / ```bash / ```shell / ```console block of the two READMEs
is parsed into commands (a trailing backslash continues a line; in a console
block only `$ ` lines are commands). Each command is either in RUN, with the
exit code the README states or implies, or in NOT_RUN, with the reason it
cannot run on a build machine. A command in neither table fails the test, and
so does a table entry that no README shows any more: nothing is skipped
silently.

Commands run from the repository root, in README order, one block at a time
(`cd` in a block moves the rest of that block), each bounded by a timeout and
stopped by its process group id on expiry. `build/wasd` and a leading `wasd`
mean $WASD_BIN; `/tmp/render` is a file in this test's temporary directory.
A command fails on exit >= 128 (a signal: a crash or an abort) or on an exit
code other than the expected one. An unlabelled block right after a shell
block is that block's output: each of its lines must appear in what the last
command printed.

Fixtures, started only when a block needs them, all on 127.0.0.1:
- kubectl: the test API server (`python3 -m apiserver` from tests/), with
  `wasd webhook` (certificates from `wasd certs generate`) registered as the
  validating webhook for Deployments;
- scripts/setup.sh and scripts/demo.sh: `apt-get` and `sudo` are stubs that
  record the call and fail, so the test never installs anything; a command
  that reached them is reported as not run (packages missing), not as failed.
"""
import base64
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from lib.wait import wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("WASD_SOURCE_DIR") or os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("WASD_BUILD_DIR") or os.path.join(SRC, "build"))
WASD = os.path.abspath(os.environ.get("WASD_BIN") or os.path.join(BUILD, "wasd"))
DOCS = ("README.md", "charts/wasd/README.md")
SHELL_LANGS = {"sh", "bash", "shell", "console"}

DEFAULT_TIMEOUT_S = 60
RENDER_TOOL = "/tmp/render"

# Commands that run here: exit code expected, and where the README says so.
# Keys are the command as the README writes it, continuation lines joined and
# a trailing comment dropped.
RUN = {
    "scripts/demo.sh": (0, "README: a denial at kubectl apply, a gang bound by kube-scheduler, explain"),
    "build/wasd check -f examples/":
        (1, "README: exit 1 when at least one Deployment is denied; examples/ has bad-*.yaml"),
    "build/wasd check -f examples/kep-1-gang-zone-atomic.yaml -o yaml":
        (0, "README: exit 0 when every Deployment is allowed"),
    '"$(scripts/components.sh)/helm" template wasd charts/wasd --namespace wasd-system':
        (1, "chart README: without image.repository the render fails"),
    '"$(scripts/components.sh)/helm" template wasd charts/wasd --namespace wasd-system --set image.repository=wasd.test/wasd':
        (0, "chart README: the default render with the real helm"),
    '"$(scripts/components.sh)/helm" template wasd charts/wasd --namespace wasd-system --set image.repository=wasd.test/wasd --set certs.mode=certManager':
        (0, "chart README: the cert-manager render"),
    '"$(scripts/components.sh)/helm" template wasd charts/wasd --namespace wasd-system -f tests/chart/testdata/values-full.yaml':
        (0, "chart README: a values file"),
    '"$(scripts/components.sh)/helm" lint --strict charts/wasd --set image.repository=wasd.test/wasd':
        (0, "chart README: helm lint --strict"),
}

# Commands that cannot run on a build machine, and why.
NOT_RUN = {
    "scripts/test.sh":
        "the whole test suite, this test included (it would run itself); CI runs it as the "
        "test command",
    "helm install wasd ./charts/wasd --namespace wasd-system --create-namespace --set "
    "image.repository=<your registry>/wasd":
        "needs helm, a real cluster and the user's own registry (<your registry> is a "
        "placeholder)",
}
# charts/wasd/README.md "Metrics": a scrape by hand on a user's cluster. The
# port-forward needs a kubelet; tests/cluster/test_secure_metrics_real.py makes
# the same ServiceAccount, ClusterRoleBinding and token (TokenRequest) on the
# real API server and scrapes both components with them.
for _cmd in ("kubectl -n wasd-system create serviceaccount scraper",
             "kubectl create clusterrolebinding wasd-scraper --clusterrole=wasd-metrics-reader "
             "--serviceaccount=wasd-system:scraper",
             "kubectl -n wasd-system port-forward deploy/wasd-reconciler 8443 &",
             'curl -sk -H "Authorization: Bearer $(kubectl -n wasd-system create token scraper)" '
             "https://127.0.0.1:8443/metrics | head"):
    NOT_RUN[_cmd] = ("a scrape by hand on a user's cluster (port-forward needs a kubelet); "
                     "cluster.test_secure_metrics_real runs the same steps on the real API server")

# Per-command bounds above the default.
TIMEOUTS = {
}


class Command:
    def __init__(self, doc, line, text):
        self.doc, self.line, self.text = doc, line, text

    def where(self):
        return f"{self.doc}:{self.line}"


class Block:
    def __init__(self, doc, line, lang, commands):
        self.doc, self.line, self.lang, self.commands = doc, line, lang, commands
        self.output = None  # lines of an unlabelled block right after this one


FENCE = re.compile(r"^ {0,3}```([\w+-]*)[^\n]*\n(.*?)^ {0,3}```[ \t]*$", re.M | re.S)


def Normalize(text):
    """One command as a table key: continuations joined, a trailing comment dropped."""
    text = re.sub(r"\\\n\s*", " ", text)
    text = re.sub(r"\s+#[^'\"]*$", "", text)
    return " ".join(text.split())


def CommandsOf(doc, first_line, lang, body):
    commands, pending, start = [], "", None
    for i, raw in enumerate(body.split("\n")):
        line = raw.rstrip()
        if lang == "console" and not pending:
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if start is None:
            start = first_line + 1 + i
        pending += line + "\n"
        if line.endswith("\\"):
            continue
        commands.append(Command(doc, start, Normalize(pending)))
        pending, start = "", None
    if pending:
        commands.append(Command(doc, start, Normalize(pending)))
    return commands


def ParseDoc(doc):
    with open(os.path.join(SRC, doc), encoding="utf-8") as f:
        text = f.read()
    blocks, previous, previous_end = [], None, None
    for m in FENCE.finditer(text):
        lang = m.group(1).lower()
        line = text.count("\n", 0, m.start()) + 1
        if lang in SHELL_LANGS:
            block = Block(doc, line, lang, CommandsOf(doc, line, lang, m.group(2)))
            blocks.append(block)
            previous, previous_end = block, m.end()
            continue
        if lang == "" and previous is not None and text[previous_end:m.start()].strip() == "":
            previous.output = [l for l in m.group(2).split("\n") if l.strip()]
        previous = None
    return blocks


def AllBlocks():
    return [b for doc in DOCS for b in ParseDoc(doc)]


def FreePorts(n):
    """A base port with n free consecutive ports on 127.0.0.1."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n > 65535:
            continue
        try:
            held = []
            for p in range(base, base + n):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no free consecutive ports on 127.0.0.1")


def Stop(proc, grace=10):
    """Stops a process started in its own session: SIGTERM to its group, then SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(grace)


class Fixtures:
    """What the README's commands need, each started on first use, stopped by PID."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.kubeconfig = None
        self.stubs = os.path.join(tmp, "stubs")
        self.stub_log = os.path.join(tmp, "stub-calls")
        os.makedirs(self.stubs)
        for name in ("apt-get", "sudo"):
            path = os.path.join(self.stubs, name)
            with open(path, "w") as f:
                f.write(f'#!/bin/sh\necho "{name} $*" >> "{self.stub_log}"\nexit 75\n')
            os.chmod(path, 0o755)
        self.home = os.path.join(tmp, "home")
        os.makedirs(self.home)

    def Env(self):
        env = dict(os.environ)
        env["PATH"] = self.stubs + os.pathsep + env.get("PATH", "")
        env["HOME"] = self.home  # kubectl's cache, Go's build cache
        env.pop("KUBECONFIG", None)
        if self.kubeconfig:
            env["KUBECONFIG"] = self.kubeconfig
        return env

    def StubCalls(self):
        if not os.path.exists(self.stub_log):
            return []
        with open(self.stub_log) as f:
            return f.read().splitlines()

    def Start(self, args, log_name, cwd=None, stdout=None):
        with open(os.path.join(self.tmp, log_name), "w") as log:
            proc = subprocess.Popen(args, cwd=cwd, stdout=stdout or log, stderr=log,
                                    stdin=subprocess.DEVNULL, start_new_session=True, text=True)
        self.procs.append(proc)
        return proc

    def Cluster(self):
        """The test API server with `wasd webhook` registered for Deployments."""
        if self.kubeconfig:
            return
        api_dir = os.path.join(self.tmp, "apiserver")
        api = self.Start([sys.executable, "-m", "apiserver", "--dir", api_dir], "apiserver.out",
                         cwd=os.path.join(SRC, "tests"), stdout=subprocess.PIPE)
        # READY <url> <kubeconfig>, or EOF when it failed; bounded.
        if not select.select([api.stdout], [], [], 60)[0]:
            raise AssertionError("the test API server printed nothing within 60 s")
        line = api.stdout.readline()
        if not line.startswith("READY "):
            raise AssertionError(f"the test API server did not start: {line!r}")
        self.kubeconfig = line.split()[2]

        certs = os.path.join(self.tmp, "certs")
        p = subprocess.run([WASD, "certs", "generate", "--service", "wasd-webhook", "--namespace",
                            "wasd-system", "--out-dir", certs, "--extra-san", "127.0.0.1"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        port = FreePorts(3)
        self.Start([WASD, "webhook", "--tls-cert-file", os.path.join(certs, "tls.crt"),
                    "--tls-key-file", os.path.join(certs, "tls.key"), "--bind-address",
                    "127.0.0.1", "--port", str(port), "--health-probe-bind-address",
                    f"127.0.0.1:{port + 1}", "--metrics-bind-address", f"127.0.0.1:{port + 2}"],
                   "webhook.log")

        def ready():
            try:
                with socket.create_connection(("127.0.0.1", port + 1), timeout=1) as s:
                    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    return s.recv(64).startswith(b"HTTP/1.1 200")
            except OSError:
                return False
        wait_for(ready, 30, 0.1, "wasd webhook /readyz")

        with open(os.path.join(certs, "ca.crt"), "rb") as f:
            ca = base64.b64encode(f.read()).decode()
        config = f"""apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: wasd-readme-test
webhooks:
- name: deployments.validate.wasd.io
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig:
    url: https://127.0.0.1:{port}/validate-apps-v1-deployment
    caBundle: {ca}
  rules:
  - apiGroups: [apps]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [deployments]
"""
        p = subprocess.run(["kubectl", "apply", "-f", "-"], input=config, env=self.Env(),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr

    def StopAll(self):
        for proc in reversed(self.procs):
            Stop(proc)
            if proc.stdout:
                proc.stdout.close()


def Substitute(text, tmp):
    """The README's spelling of a command as it runs here."""
    text = re.sub(r"(^|(?<=[\s;&|(]))build/wasd\b", WASD, text)
    text = re.sub(r"^wasd\b", WASD, text)
    return text.replace(RENDER_TOOL, os.path.join(tmp, "render"))


class ReadmeCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.blocks = AllBlocks()
        cls.commands = [c for b in cls.blocks for c in b.commands]

    def test_every_command_is_run_or_listed(self):
        self.assertTrue(self.commands, "no shell blocks found in " + ", ".join(DOCS))
        shown = {c.text for c in self.commands}
        for c in self.commands:
            with self.subTest(command=c.text, where=c.where()):
                self.assertTrue(c.text in RUN or c.text in NOT_RUN,
                                f"{c.where()}: `{c.text}` is neither in RUN (with its exit code) "
                                "nor in NOT_RUN (with the reason) of this test")
                self.assertFalse(c.text in RUN and c.text in NOT_RUN, c.text)
        for key in list(RUN) + list(NOT_RUN):
            with self.subTest(table_entry=key):
                self.assertIn(key, shown, "a table entry that no README shows any more")

    def test_run_every_command_that_can_run_here(self):
        tmp = tempfile.mkdtemp(prefix="wasd-readme-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fixtures = Fixtures(tmp)
        self.addCleanup(fixtures.StopAll)
        report = []  # (where, command, what happened)
        for block in self.blocks:
            cwd = SRC
            skip_rest = None
            last = None
            for c in block.commands:
                if c.text in NOT_RUN:
                    report.append((c.where(), c.text, "not run: " + NOT_RUN[c.text]))
                    continue
                if c.text not in RUN:
                    continue  # reported by test_every_command_is_run_or_listed
                if skip_rest:
                    report.append((c.where(), c.text, "not run: " + skip_rest))
                    continue
                expected, _ = RUN[c.text]
                if c.text.startswith("cd "):
                    cwd = os.path.normpath(os.path.join(cwd, c.text[3:].strip()))
                    self.assertTrue(os.path.isdir(cwd), f"{c.where()}: {c.text}")
                    report.append((c.where(), c.text, "ran: exit 0"))
                    continue
                why_not = self.CannotRunHere(c)
                if why_not:
                    report.append((c.where(), c.text, "not run: " + why_not))
                    continue
                if c.text.startswith("kubectl "):
                    fixtures.Cluster()
                env = fixtures.Env()
                calls_before = len(fixtures.StubCalls())
                rc, out, elapsed = self.Run(Substitute(c.text, tmp), cwd, env,
                                            TIMEOUTS.get(c.text, DEFAULT_TIMEOUT_S))
                stub_calls = fixtures.StubCalls()[calls_before:]
                if stub_calls:
                    skip_rest = "it would install Debian packages: " + "; ".join(stub_calls)
                    report.append((c.where(), c.text, "not run: " + skip_rest))
                    continue
                report.append((c.where(), c.text, f"ran: exit {rc} in {elapsed:.1f} s"))
                last = (c, out)
                with self.subTest(command=c.text, where=c.where()):
                    self.assertLess(rc, 128, f"{c.where()}: `{c.text}` died by a signal or "
                                             f"timed out (exit {rc}):\n{out[-4000:]}")
                    self.assertEqual(rc, expected, f"{c.where()}: `{c.text}`:\n{out[-4000:]}")
            if block.output and last is not None:
                c, out = last
                for line in block.output:
                    with self.subTest(output_of=c.text, where=c.where()):
                        self.assertIn(line.strip(), out,
                                      f"{block.doc}: the output the README shows after "
                                      f"`{c.text}` is not what it prints")
        width = max(len(w) for w, _, _ in report)
        print("\nREADME commands:", file=sys.stderr)
        for where, text, what in report:
            print(f"  {where:<{width}}  {text}\n  {'':<{width}}    -> {what}", file=sys.stderr)

    @staticmethod
    def CannotRunHere(c):
        if c.text == "scripts/demo.sh":
            return ("it starts the real control plane; tests/cluster/test_demo.py runs it "
                    "(ctest label cluster), and `scripts/demo.sh --local` too")
        return None

    @staticmethod
    def Run(command, cwd, env, timeout):
        start = time.monotonic()
        proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True, text=True,
                                errors="replace")
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            return 128 + signal.SIGKILL, out + f"\n[killed after {timeout} s]", timeout
        return proc.returncode, out, time.monotonic() - start


if __name__ == "__main__":
    unittest.main(verbosity=2)
