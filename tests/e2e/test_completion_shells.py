#!/usr/bin/env python3
"""Shell completion in the real shells (issue 42), each asked the way a
user's TAB asks it:

- bash and zsh run interactively on a pseudo-terminal with the script from
  `wasd completion bash|zsh` loaded the way docs/reference/cli.md says; the
  test types a line and TAB, then a key bound to a widget that saves the
  edited line. The script's own function, called by readline or by compsys
  (compinit, the compdef registration), records the candidates it offered
  (bash: COMPREPLY after the call; zsh: compadd's matches). Also loaded from
  a file `_wasd` on zsh's $fpath, where compinit autoloads it: the first TAB
  completes too.
- fish: `complete -C LINE` (what TAB would list) after `source`, and with the
  script autoloaded from ~/.config/fish/completions/wasd.fish.
- kubectl: `kubectl __complete wasd ...` (what kubectl's own completion runs
  for `kubectl wasd <TAB>`) with kubectl-wasd and kubectl_complete-wasd on
  PATH answers wasd's candidates, and `deployment/` with cobra's no-space
  directive.

In every shell: the subcommands after `wasd `, the flags after `wasd
explain --`, the output formats after `-o ` and `--output=j`, `deployment/`
for explain's argument with no space after it (the one dynamic-looking
candidate is static: nothing asks a cluster, so a missing or unreachable
cluster changes nothing and nothing is printed into the line), and file
names where wasd knows no candidates (`--kubeconfig PATH`). Each shell's
parser accepts the script (`zsh -n`, `fish -n`, `bash -n`). A shell that is
not installed is skipped, saying so; scripts/setup.sh installs all three.
Every process is bounded by a timeout and stopped by its PID."""
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

WASD = os.path.abspath(os.environ.get("WASD_BIN", "build/wasd"))
SOURCE = os.environ.get("WASD_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HELPER = os.path.join(SOURCE, "scripts", "kubectl_complete-wasd")
TIMEOUT = 30

SUBCOMMANDS = {"webhook", "reconciler", "certs", "check", "selftest", "explain", "migrate",
               "version", "completion", "help"}
FORMATS = {"text", "json", "yaml"}
# An unreachable cluster: if completion asked one, it would hang or print.
DEAD_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def kubectl_binary():
    root = "/var/cache/wasd/components"
    if os.path.isdir(root):
        for d in sorted(os.listdir(root)):
            k = os.path.join(root, d, "bin", "kubectl")
            if os.access(k, os.X_OK):
                return k
    return shutil.which("kubectl")


class Sandbox(unittest.TestCase):
    """A HOME of its own with wasd, kubectl-wasd and kubectl_complete-wasd
    on PATH, a kubeconfig naming an unreachable cluster, and a file to
    complete."""

    shell = None

    def setUp(self):
        if self.shell is not None and shutil.which(self.shell) is None:
            self.skipTest(f"{self.shell} is not installed (scripts/setup.sh installs it)")
        self.dir = tempfile.mkdtemp(prefix="wasd-shells-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.bin)
        for name in ("wasd", "kubectl-wasd"):
            os.symlink(WASD, os.path.join(self.bin, name))
        shutil.copy2(HELPER, os.path.join(self.bin, "kubectl_complete-wasd"))
        self.kubeconfig = os.path.join(self.dir, "dead-kubeconfig.yaml")
        with open(self.kubeconfig, "w") as f:
            f.write(DEAD_KUBECONFIG)
        self.env = dict(os.environ, HOME=self.dir, XDG_CONFIG_HOME=os.path.join(self.dir, ".config"),
                        XDG_DATA_HOME=os.path.join(self.dir, ".local", "share"),
                        KUBECONFIG=self.kubeconfig, TERM="dumb",
                        PATH=self.bin + os.pathsep + os.environ.get("PATH", ""))
        for v in ("ZDOTDIR", "BASH_ENV", "ENV", "PROMPT_COMMAND"):
            self.env.pop(v, None)

    def script(self, shell, program="wasd"):
        p = subprocess.run([program, "completion", shell], capture_output=True, text=True,
                           timeout=TIMEOUT, env=self.env)
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        return p.stdout

    def parses(self, shell):
        p = subprocess.run([shell, "-n"], input=self.script(shell), capture_output=True, text=True,
                           timeout=TIMEOUT, env=self.env)
        self.assertEqual((p.returncode, p.stderr), (0, ""), shell)


class Terminal:
    """An interactive shell on a pseudo-terminal. `tab(line)` types the line
    and TAB, then ^X, which the shell's rc file binds to saving the edited
    line in `buffer` and emptying it for the next; the completion function, wrapped by the rc file,
    appends what it offered to `cands`."""

    def __init__(self, argv, env, cwd, prompt):
        self.cwd = cwd
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     cwd=cwd, start_new_session=True)
        os.close(slave)
        self.output = b""
        self.wait_for(lambda: prompt.encode() in self.output, "the first prompt")

    def read_some(self):
        r, _, _ = select.select([self.master], [], [], 0.05)
        if r:
            try:
                self.output += os.read(self.master, 65536)
            except OSError:
                pass

    def wait_for(self, done, what):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            self.read_some()
            if done():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"shell exited ({self.proc.returncode}) before {what}: "
                                     f"{self.output[-2000:]!r}")
        raise AssertionError(f"no {what} within {TIMEOUT}s: {self.output[-2000:]!r}")

    def tab(self, line):
        """(the line after TAB, the candidates the function offered)."""
        for name in ("buffer", "cands"):
            if os.path.exists(os.path.join(self.cwd, name)):
                os.remove(os.path.join(self.cwd, name))
        os.write(self.master, line.encode() + b"\t\x18")
        buffer = os.path.join(self.cwd, "buffer")
        self.wait_for(lambda: os.path.exists(buffer), f"saved line after {line!r}<TAB>")
        with open(buffer) as f:
            edited = f.read()
        cands = []
        if os.path.exists(os.path.join(self.cwd, "cands")):
            with open(os.path.join(self.cwd, "cands")) as f:
                cands = [c for c in f.read().split("\n") if c]
        return edited, cands

    def close(self):
        try:
            os.write(self.master, b"exit\n")  # the line is empty after save
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        os.close(self.master)


class InteractiveCases:
    """The same TABs in bash and zsh (the Terminal of self.start())."""

    def test_subcommands_flags_values(self):
        t = self.start()
        self.assertEqual(t.tab("wasd ex"), ("wasd explain ", ["explain"]))
        line, cands = t.tab("wasd ")
        self.assertEqual(line, "wasd ")
        self.assertEqual(set(cands), SUBCOMMANDS)
        line, cands = t.tab("wasd certs ")
        self.assertEqual(set(cands), {"generate", "inject-ca", "rotate", "uninstall"})
        line, cands = t.tab("wasd explain --")
        self.assertEqual(line, "wasd explain --")
        self.assertTrue({"--kubeconfig", "--output", "--namespace", "--backend", "--help"}
                        <= set(cands), cands)
        self.assertTrue(all(c.startswith("--") for c in cands), cands)
        self.assertEqual(t.tab("wasd explain --kubec"), ("wasd explain --kubeconfig ",
                                                         ["--kubeconfig"]))
        line, cands = t.tab("wasd explain -o ")
        self.assertEqual(set(cands), FORMATS)
        self.assertEqual(t.tab("wasd explain -o y")[0], "wasd explain -o yaml ")
        self.assertEqual(t.tab("wasd explain --output=j")[0], "wasd explain --output=json ")
        self.assertEqual(t.tab("wasd completion f")[0], "wasd completion fish ")

    def test_deployment_without_a_cluster(self):
        # KUBECONFIG names an unreachable server: the line is completed at
        # once, with nothing printed into it, and no space after the "/".
        t = self.start()
        self.assertEqual(t.tab("wasd explain ")[0], "wasd explain deployment/")
        self.assertEqual(t.tab("wasd migrate -n ns ")[0], "wasd migrate -n ns deployment/")
        self.assertNotIn(b"error", t.output.lower())
        self.assertNotIn(b"127.0.0.1:9", t.output)

    def test_file_names_where_wasd_knows_none(self):
        t = self.start()
        os.mkdir(os.path.join(self.dir, "kc"))
        open(os.path.join(self.dir, "kc", "cluster-a.yaml"), "w").close()
        line, _ = t.tab("wasd explain --kubeconfig kc/clu")
        self.assertEqual(line, "wasd explain --kubeconfig kc/cluster-a.yaml ")


class Bash(Sandbox, InteractiveCases):
    shell = "bash"

    def start(self, program="wasd"):
        fn = "_" + program.replace("-", "_")
        rc = os.path.join(self.dir, "bashrc")
        with open(rc, "w") as f:
            f.write(f"""source <({program} completion bash) || exit 7
# The script's registration, left as it is; its function wrapped to record.
complete -p {program} > registered
eval "$(declare -f {fn} | sed '1s/^{fn} /{fn}_real /')"
{fn}() {{ {fn}_real "$@"; local rc=$?; printf '%s\\n' "${{COMPREPLY[@]}}" >> cands; return $rc; }}
save() {{ printf '%s' "$READLINE_LINE" > buffer.tmp && mv buffer.tmp buffer; READLINE_LINE=; READLINE_POINT=0; }}
bind -x '"\\C-x": save'
bind 'set bell-style none'
PS1='bash-ready$ '
""")
        t = Terminal(["bash", "--noprofile", "--rcfile", rc, "-i"], self.env, self.dir,
                     "bash-ready$ ")
        self.addCleanup(t.close)
        with open(os.path.join(self.dir, "registered")) as f:
            self.assertEqual(f.read(), f"complete -o default -F {fn} {program}\n")
        return t

    def test_parses(self):
        self.parses("bash")

    def test_as_kubectl_wasd(self):
        t = self.start("kubectl-wasd")
        self.assertEqual(t.tab("kubectl-wasd mig"), ("kubectl-wasd migrate ", ["migrate"]))


class Zsh(Sandbox, InteractiveCases):
    shell = "zsh"

    def start(self, program="wasd", fpath=False):
        fn = "_" + program.replace("-", "_")
        if fpath:
            # The file compinit autoloads: _wasd in a directory on $fpath.
            os.mkdir(os.path.join(self.dir, "functions"))
            with open(os.path.join(self.dir, "functions", fn), "w") as f:
                f.write(self.script("zsh", program))
            load = "fpath=(~/functions $fpath)\nautoload -U compinit && compinit -u -D\n"
        else:
            load = (f"autoload -U compinit && compinit -u -D\n"
                    f"source <({program} completion zsh) || exit 7\n")
        with open(os.path.join(self.dir, ".zshrc"), "w") as f:
            f.write(load + f"""print -r -- "${{_comps[{program}]}}" > registered
# compadd wrapped to record the matches (what survives the typed prefix).
compadd() {{ local -a m; builtin compadd -O m "$@"; print -rl -- $m >> ~/cands; builtin compadd "$@"; }}
save() {{ print -rn -- "$BUFFER" > ~/buffer.tmp && mv ~/buffer.tmp ~/buffer; BUFFER= }}
zle -N save
bindkey '^X' save
unsetopt beep
PS1='zsh-ready%# '
""")
        env = dict(self.env, ZDOTDIR=self.dir)
        t = Terminal(["zsh", "-i"], env, self.dir, "zsh-ready")
        self.addCleanup(t.close)
        with open(os.path.join(self.dir, "registered")) as f:
            self.assertEqual(f.read(), fn + "\n")
        return t

    def test_parses(self):
        self.parses("zsh")

    def test_autoloaded_from_fpath_the_first_tab_completes(self):
        t = self.start(fpath=True)
        self.assertEqual(t.tab("wasd ex"), ("wasd explain ", ["explain"]))
        self.assertEqual(set(t.tab("wasd explain -o ")[1]), FORMATS)

    def test_as_kubectl_wasd(self):
        t = self.start("kubectl-wasd")
        self.assertEqual(t.tab("kubectl-wasd mig"), ("kubectl-wasd migrate ", ["migrate"]))


class Fish(Sandbox):
    shell = "fish"

    def complete(self, line, load="source (wasd completion fish | psub)"):
        """What fish's TAB would list for `line`: `complete -C`, the
        descriptions (after a tab) dropped."""
        p = subprocess.run(["fish", "-c", f"{load}; complete -C {quote(line)}"],
                           capture_output=True, text=True, timeout=TIMEOUT, env=self.env,
                           cwd=self.dir)
        self.assertEqual((p.returncode, p.stderr), (0, ""), line)
        return [c.split("\t")[0] for c in p.stdout.split("\n") if c]

    def test_parses(self):
        self.parses("fish")

    def test_subcommands_flags_values(self):
        self.assertEqual(self.complete("wasd ex"), ["explain"])
        self.assertEqual(set(self.complete("wasd ")), SUBCOMMANDS)
        self.assertEqual(set(self.complete("wasd certs ")),
                         {"generate", "inject-ca", "rotate", "uninstall"})
        flags = self.complete("wasd explain --")
        self.assertTrue({"--kubeconfig", "--output", "--namespace", "--backend", "--help"}
                        <= set(flags), flags)
        self.assertTrue(all(c.startswith("--") for c in flags), flags)
        self.assertEqual(set(self.complete("wasd explain -o ")), FORMATS)
        self.assertEqual(self.complete("wasd explain -o y"), ["yaml"])
        self.assertEqual(self.complete("wasd explain --output=j"), ["--output=json"])

    def test_deployment_without_a_cluster(self):
        self.assertEqual(self.complete("wasd explain "), ["deployment/"])
        self.assertEqual(self.complete("wasd migrate -n ns "), ["deployment/"])

    def test_file_names_where_wasd_knows_none(self):
        os.mkdir(os.path.join(self.dir, "kc"))
        open(os.path.join(self.dir, "kc", "cluster-a.yaml"), "w").close()
        self.assertEqual(self.complete("wasd explain --kubeconfig kc/clu"), ["kc/cluster-a.yaml"])

    def test_autoloaded_from_the_completions_directory(self):
        d = os.path.join(self.dir, ".config", "fish", "completions")
        os.makedirs(d)
        with open(os.path.join(d, "wasd.fish"), "w") as f:
            f.write(self.script("fish"))
        self.assertEqual(self.complete("wasd ex", load="true"), ["explain"])

    def test_as_kubectl_wasd(self):
        self.assertEqual(self.complete("kubectl-wasd mig",
                                       load="kubectl-wasd completion fish | source"), ["migrate"])


def quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


class Kubectl(Sandbox):
    """`kubectl wasd <TAB>`: kubectl's completion script runs `kubectl
    __complete wasd WORDS...`, which runs kubectl_complete-wasd."""

    def complete(self, *words):
        kubectl = kubectl_binary()
        if kubectl is None:
            self.skipTest("no kubectl (scripts/components.sh builds it, scripts/setup.sh installs one)")
        p = subprocess.run([kubectl, "__complete", "wasd", *words], capture_output=True,
                           text=True, timeout=TIMEOUT, env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.split("\n")
        self.assertEqual(lines[-1], "")
        return lines[:-2], lines[-2]  # the candidates, cobra's ":directive" line

    def test_wasd_answers(self):
        self.assertEqual(self.complete("ex"), (["explain"], ":0"))
        self.assertEqual(self.complete("explain", "-o", ""), (["text", "json", "yaml"], ":0"))
        cands, _ = self.complete("explain", "--")
        self.assertIn("--kubeconfig", cands)
        # No space after deployment/ (2: ShellCompDirectiveNoSpace), no
        # cluster asked although KUBECONFIG names an unreachable one.
        self.assertEqual(self.complete("explain", ""), (["deployment/"], ":2"))
        # Nothing known: kubectl's default, the shell's file names.
        self.assertEqual(self.complete("explain", "--kubeconfig", ""), ([], ":0"))


if __name__ == "__main__":
    unittest.main()
