#!/usr/bin/env python3
"""The command line as a user meets it (issue 14): the exact mistakes the
review made with the README open, run against the real binary, with the
exact output. Every subcommand reads flags, durations and booleans the same
way and reports a mistake in the same two lines."""
import os
import subprocess
import unittest

WASD = os.environ.get("WASD_BIN", "build/wasd")


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
                     ["selftest", "--timeout=1.5m"]):
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
