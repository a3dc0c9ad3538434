"""Every wasd command line the chart renders is accepted by the built
binary's flag parser: the rendered arguments plus a trailing --help are run
through $WASD_BIN (the parsers check each flag before they reach --help, so
an unknown flag or a bad value fails). Skipped when no binary is available.
"""

import os
import subprocess
import unittest


from lib import chart

WASD_BIN = os.environ.get("WASD_BIN", "")
FULL = os.path.join(chart.TESTDATA, "values-full.yaml")

# --help returns at once; the bound only guards against a hang.
_TIMEOUT_S = 30


def wasd_commands(objs):
    """(where, args) of every container: all run the wasd image."""
    out = []
    for o in objs:
        if o["kind"] not in ("Deployment", "Job", "Pod"):
            continue
        spec = o["spec"] if o["kind"] == "Pod" else o["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec["containers"]:
            self_contained = "command" not in c
            out.append(("%s/%s" % (o["metadata"]["name"], c["name"]), c["args"], self_contained))
    return out


@unittest.skipUnless(WASD_BIN and os.access(WASD_BIN, os.X_OK), "WASD_BIN not built")
class CommandLines(unittest.TestCase):
    def test_rendered_command_lines_parse(self):
        scenarios = [
            dict(),
            dict(sets=["certs.mode=certManager"]),
            dict(values_files=[FULL], sets=["certs.mode=selfManaged",
                                            "certs.selfManaged.rotation.enabled=true"]),
            dict(values_files=[FULL]),
        ] + [dict(values_files=[f]) for f in chart.ci_values_files().values()]
        seen = set()
        for kw in scenarios:
            for where, args, self_contained in wasd_commands(chart.render(**kw)):
                self.assertTrue(self_contained, "%s overrides the image entrypoint" % where)
                seen.add(tuple(args[:2]) if args[0] == "certs" else (args[0],))
                proc = subprocess.run([WASD_BIN] + args + ["--help"], capture_output=True,
                                      text=True, timeout=_TIMEOUT_S)
                self.assertEqual(proc.returncode, 0, "%s: %s\n%s" % (where, args, proc.stderr))
        self.assertEqual(seen, {("webhook",), ("reconciler",), ("certs", "rotate"),
                                ("certs", "uninstall"), ("selftest",)})

    def test_a_bad_flag_is_noticed(self):
        # Control: the check above can fail.
        proc = subprocess.run([WASD_BIN, "webhook", "--no-such-flag", "1", "--help"],
                              capture_output=True, text=True, timeout=_TIMEOUT_S)
        self.assertNotEqual(proc.returncode, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
