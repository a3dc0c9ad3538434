#!/usr/bin/env python3
"""The command line as a user meets it (issue 14): the exact mistakes the
review made with the README open, run against the real binary, with the
exact output. Every subcommand reads flags, durations and booleans the same
way and reports a mistake in the same two lines."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

WASD = os.environ.get("WASD_BIN", "build/wasd")
SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def run(*args):
    p = subprocess.run([WASD, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def mistake(sub, message):
    return f"{sub}: {message}\nRun '{sub} --help' for usage.\n"


class Durations(unittest.TestCase):
    def test_compound_durations_are_accepted_by_every_command(self):
        # Flags are parsed in order and --help ends the parse: exit 0 shows
        # that every value before it was accepted.
        for args in (["reconciler", "--resync-period", "1m30s"],
                     ["webhook", "--read-timeout", "1m30s"],
                     ["certs", "rotate", "--check-interval", "1m30s"],
                     ["selftest", "--request-timeout=1.5m"],
                     ["explain", "--request-timeout", "1m30s"]):
            with self.subTest(args=args):
                rc, out, err = run(*args, "--help")
                self.assertEqual((rc, err), (0, ""))
                self.assertTrue(out.startswith("Usage: wasd "), out)

    def test_a_bare_number_is_refused_everywhere_with_the_same_words(self):
        want = ('invalid value "90" for --{flag}: invalid duration "90": missing unit; write it '
                'with one such as 30s, 500ms, 5m or 1h (ns, us, ms, s, m, h)')
        for sub, flag, required in (
                ("reconciler", "resync-period", []),
                ("webhook", "read-timeout", ["--tls-cert-file=c", "--tls-key-file=k"]),
                ("certs rotate", "check-interval", ["--service=s", "--secret=x"])):
            with self.subTest(sub=sub):
                rc, out, err = run(*sub.split(), *required, f"--{flag}", "90")
                self.assertEqual(rc, 2)
                self.assertEqual(out, "")
                self.assertEqual(err, mistake(f"wasd {sub}", want.format(flag=flag)))


class Booleans(unittest.TestCase):
    def test_leader_elect_false_is_a_value_not_a_missing_one(self):
        for form in (["--leader-elect", "false"], ["--leader-elect=false"], ["--leader-elect"]):
            with self.subTest(form=form):
                rc, _, err = run("reconciler", *form, "--help")
                self.assertEqual((rc, err), (0, ""))

    def test_a_bad_boolean_names_the_flag(self):
        rc, _, err = run("reconciler", "--leader-elect=maybe")
        self.assertEqual(rc, 2)
        self.assertEqual(err, mistake("wasd reconciler",
                                      'invalid value "maybe" for --leader-elect: want true or false'))


class OneErrorStyle(unittest.TestCase):
    def test_unknown_flags_and_missing_values(self):
        cases = [
            (["check", "--nope"], mistake("wasd check", "unknown flag --nope")),
            (["check"], mistake("wasd check", "no manifests given (use -f FILE, or --capabilities)")),
            (["webhook"], mistake("wasd webhook", "flag --tls-cert-file is required")),
            (["certs", "inject-ca", "--ca-file"],
             mistake("wasd certs inject-ca", "flag --ca-file needs a value")),
            (["certs", "uninstall", "--webhook-config=w", "--secret", "no-slash"],
             mistake("wasd certs uninstall", '--secret wants NAMESPACE/NAME, got "no-slash"')),
            (["version", "--bogus"], mistake("wasd version", "unknown flag --bogus")),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                rc, out, err = run(*args)
                self.assertEqual(rc, 2)
                self.assertEqual(out, "")
                self.assertEqual(err, want)

    def test_help_has_one_format(self):
        for sub in (["webhook"], ["reconciler"], ["check"], ["certs", "generate"],
                    ["certs", "inject-ca"], ["certs", "rotate"], ["certs", "uninstall"],
                    ["selftest"], ["version"]):
            with self.subTest(sub=sub):
                rc, out, err = run(*sub, "--help")
                self.assertEqual((rc, err), (0, ""))
                self.assertTrue(out.startswith("Usage: wasd " + " ".join(sub)), out)
                self.assertIn("\nFlags:\n", out)
                self.assertIn("  -h, --help", out)


class Version(unittest.TestCase):
    """`wasd version` reports the VERSION file (issue 42), not git describe."""

    def release(self):
        with open(os.path.join(SOURCE_DIR, "VERSION")) as f:
            return f.readline().strip()

    def test_short_is_the_version_file_alone(self):
        self.assertEqual(run("version", "--short"), (0, self.release() + "\n", ""))

    def test_json_and_yaml_are_one_object_with_the_build_facts(self):
        rc, out, err = run("version", "-o", "json")
        self.assertEqual((rc, err), (0, ""))
        info = json.loads(out)
        self.assertEqual(info["version"], self.release())
        self.assertRegex(info["buildDate"], r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
        self.assertRegex(info["compiler"], r"^(gcc|clang) \d+")
        self.assertEqual(info["cplusplus"], 202002)
        self.assertRegex(info["openssl"]["version"], r"^OpenSSL \d+\.\d+")
        self.assertIn(info["openssl"]["linkage"], ("static", "dynamic"))
        self.assertRegex(info["glibc"]["version"], r"^\d+\.\d+")
        if "revision" in info:
            self.assertRegex(info["revision"], r"^[0-9a-f]{40}$")
            self.assertIn(info["treeState"], ("clean", "dirty"))
        # The same object as YAML, in both pflag spellings of -o.
        for form in (["-o", "yaml"], ["-oyaml"], ["--output=yaml"]):
            with self.subTest(form=form):
                rc, out, err = run("version", *form)
                self.assertEqual((rc, err), (0, ""))
                self.assertEqual(yaml.safe_load(out), info)

    def test_text_names_the_version_and_the_revision(self):
        rc, out, _ = run("version")
        self.assertEqual(rc, 0)
        info = json.loads(run("version", "-o", "json")[1])
        want = r"wasd %s \(" % re.escape(self.release())
        if "revision" in info:
            want += "revision %s, " % info["revision"]
        self.assertRegex(out.splitlines()[0], "^" + want + "(modified, )?built ")

    def test_short_and_output_do_not_combine(self):
        self.assertEqual(run("version", "--short", "-o", "json"),
                         (2, "", mistake("wasd version",
                                         "--short prints the version alone; leave out -o")))


class Help(unittest.TestCase):
    """`wasd help CMD` is `wasd CMD --help`, and run as the kubectl plugin
    the binary names itself `kubectl wasd` (issue 42)."""

    COMMANDS = (["webhook"], ["reconciler"], ["check"], ["certs", "generate"],
                ["certs", "inject-ca"], ["certs", "rotate"], ["certs", "uninstall"],
                ["selftest"], ["explain"], ["migrate"], ["version"])

    def test_help_cmd_is_cmd_dash_dash_help(self):
        for sub in self.COMMANDS:
            with self.subTest(sub=sub):
                want = run(*sub, "--help")
                self.assertEqual(want[0], 0)
                self.assertEqual(run("help", *sub), want)
        self.assertEqual(run("help")[1], run("--help")[1])

    def test_as_a_plugin_help_and_mistakes_say_kubectl_wasd(self):
        tmp = tempfile.mkdtemp(prefix="wasd-plugin-")
        self.addCleanup(shutil.rmtree, tmp, True)
        plugin = os.path.join(tmp, "kubectl-wasd")
        os.symlink(os.path.abspath(WASD), plugin)
        p = subprocess.run([plugin, "help", "explain"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("Usage: kubectl wasd explain deployment/NAME"), p.stdout)
        p = subprocess.run([plugin, "check", "-R", "-f"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual((p.returncode, p.stderr),
                         (2, mistake("kubectl wasd check", "flag --filename needs a value")))
        # Run as wasd, the same text says wasd.
        self.assertTrue(run("help", "explain")[1].startswith("Usage: wasd explain "))


class Logs(unittest.TestCase):
    def test_text_and_json_lines_have_the_same_keys_in_the_same_order(self):
        # A command that logs and exits at once: certs generate into a file
        # where a directory is needed.
        for fmt, want_start in (("json", '{"time":"'), ("text", "time=")):
            with self.subTest(fmt=fmt):
                rc, _, err = run("certs", "generate", "--service=s", "--namespace=n",
                                 "--out-dir=/proc/version/x", f"--log-format={fmt}")
                self.assertEqual(rc, 1)
                line = err.strip().splitlines()[-1]
                self.assertTrue(line.startswith(want_start), line)
                order = [line.find(k) for k in ("time", "level", "msg", "outDir")]
                self.assertEqual(order, sorted(order), line)
                self.assertNotIn(-1, order, line)


if __name__ == "__main__":
    unittest.main()
