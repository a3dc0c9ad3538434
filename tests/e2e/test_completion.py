#!/usr/bin/env python3
"""Shell completion as a user loads it (issue 42): `wasd completion bash`
is sourced by a real bash and registers its function; calling that function
the way bash does (COMP_LINE, COMP_POINT, COMP_WORDS, COMP_CWORD) completes
`wasd ex` to explain and `wasd explain -o ` to the output formats; as
kubectl-wasd the script completes kubectl-wasd. The zsh and fish scripts are
checked here by their text and with `zsh -n` / `fish -n`; the real shells'
TAB in all three is tests/e2e/test_completion_shells.py. No shell, or an unknown one, is a usage
error with exit code 2."""
import os
import shutil
import subprocess
import tempfile
import unittest

WASD = os.path.abspath(os.environ.get("WASD_BIN", "build/wasd"))


def run(*args, program=WASD):
    p = subprocess.run([program, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def bash_complete(program, line):
    """COMPREPLY of the sourced script's function for `line` (the cursor at
    its end), as bash would call it on TAB; `program` is found on PATH."""
    name = os.path.basename(program)
    words = line.split(" ")
    script = (
        'source <("$PROG" completion bash) || exit 9\n'
        'fn=$(complete -p "$PROG" | sed -n "s/.*-F \\([^ ]*\\).*/\\1/p")\n'
        'COMP_LINE=$LINE; COMP_POINT=${#LINE}\n'
        'read -ra COMP_WORDS <<< "$LINE"; [[ $LINE == *" " ]] && COMP_WORDS+=("")\n'
        'COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n'
        '"$fn" "$PROG" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n')
    env = dict(os.environ, PROG=name, LINE=line,
               PATH=os.path.dirname(program) + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                       env=env)
    assert p.returncode == 0, (words, p.returncode, p.stderr)
    return [w for w in p.stdout.split("\n") if w]


class Bash(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wasd-completion-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.wasd = os.path.join(self.dir, "wasd")
        self.plugin = os.path.join(self.dir, "kubectl-wasd")
        os.symlink(WASD, self.wasd)
        os.symlink(WASD, self.plugin)

    def test_sourcing_registers_the_function(self):
        p = subprocess.run(["bash", "-c", 'source <("$W" completion bash) && complete -p wasd'],
                           capture_output=True, text=True, timeout=60, env=dict(os.environ, W=WASD))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "complete -o default -F _wasd wasd\n")

    def test_tab_completes_subcommands_flags_and_values(self):
        self.assertEqual(bash_complete(self.wasd, "wasd ex"), ["explain"])
        self.assertEqual(bash_complete(self.wasd, "wasd certs "),
                         ["generate", "inject-ca", "rotate", "uninstall"])
        self.assertEqual(bash_complete(self.wasd, "wasd explain -o "), ["text", "json", "yaml"])
        self.assertEqual(bash_complete(self.wasd, "wasd explain "), ["deployment/"])
        # readline replaces only what follows the "=": the value alone.
        self.assertEqual(bash_complete(self.wasd, "wasd explain --output=js"), ["json"])
        self.assertIn("--kubeconfig", bash_complete(self.wasd, "wasd explain --"))

    def test_as_kubectl_wasd_it_completes_kubectl_wasd(self):
        rc, out, err = run("completion", "bash", program=self.plugin)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("complete -o default -F _kubectl_wasd kubectl-wasd\n", out)
        self.assertIn("kubectl-wasd __complete", out)
        self.assertEqual(bash_complete(self.plugin, "kubectl-wasd mig"), ["migrate"])


class Complete(unittest.TestCase):
    def test_output_formats_of_explain(self):
        self.assertEqual(run("__complete", "explain", "-o", ""), (0, "text\njson\nyaml\n", ""))

    def test_free_form_values_get_nothing(self):
        self.assertEqual(run("__complete", "explain", "--namespace", ""), (0, "", ""))

    def test_hidden_from_help(self):
        rc, out, _ = run("--help")
        self.assertEqual(rc, 0)
        self.assertIn("  completion  ", out)
        self.assertNotIn("__complete", out)


class OtherShells(unittest.TestCase):
    def check(self, shell, must_hold):
        rc, out, err = run("completion", shell)
        self.assertEqual((rc, err), (0, ""))
        for text in must_hold:
            self.assertIn(text, out)
        binary = shutil.which(shell)
        if binary is None:
            # Not installed here: the text is all that can be checked.
            return
        p = subprocess.run([binary, "-n"], input=out, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_zsh(self):
        self.check("zsh", ["#compdef wasd\n", "compdef _wasd wasd\n",
                           'wasd __complete "${(@)words[2,CURRENT]}"'])

    def test_fish(self):
        self.check("fish", ["complete -c wasd -f -a '(_wasd)'\n",
                            'wasd __complete $words "$cur"'])


class Mistakes(unittest.TestCase):
    def test_no_shell_or_an_unknown_one_is_a_usage_error(self):
        self.assertEqual(run("completion"), (2, "", "wasd completion: name a shell: bash, zsh or "
                                             "fish\nRun 'wasd completion --help' for usage.\n"))
        rc, out, err = run("completion", "powershell")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn('unknown shell "powershell"', err)
        self.assertEqual(run("completion", "bash", "zsh")[0], 2)
        self.assertEqual(run("completion", "--bash"),
                         (2, "", "wasd completion: unknown flag --bash\n"
                                 "Run 'wasd completion --help' for usage.\n"))

    def test_help(self):
        rc, out, err = run("completion", "--help")
        self.assertEqual((rc, err), (0, ""))
        self.assertTrue(out.startswith("Usage: wasd completion bash|zsh|fish\n"), out)
        self.assertEqual(run("help", "completion"), (rc, out, err))


if __name__ == "__main__":
    unittest.main()
