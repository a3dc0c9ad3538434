"""The floors of the house (layers.txt), checked by machine: no product folder includes
one the table does not allow, a pure folder includes no Boost or OpenSSL, and
scripts/tidy.sh and .clang-tidy take their folder lists from the same table. The check
itself is shown to fail on a tree with a forbidden include."""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.environ.get("WASD_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import layers  # noqa: E402  (scripts/layers.py)


def WriteTree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


class LayersTest(unittest.TestCase):
    def test_the_tree_keeps_the_table(self):
        self.assertEqual(layers.Violations(ROOT), [])

    def test_a_forbidden_include_fails_the_check(self):
        with tempfile.TemporaryDirectory() as d:
            WriteTree(d, {
                "layers.txt": "base pure\nplanner pure base\nkube io base\n",
                "base/status.h": "#include <string>\n",
                "planner/plan.cc": '#include "base/status.h"\n#include "planner/plan.h"\n',
                "kube/client.cc": '#include "base/status.h"\n#include <boost/asio/io_context.hpp>\n',
            })
            self.assertEqual(layers.Violations(d), [])
            # A pure folder reaching up into an I/O one, and into the network stack.
            WriteTree(d, {"planner/plan.cc": '#include "kube/client.h"\n'
                                             '#include <boost/beast/http/verb.hpp>\n'})
            bad = layers.Violations(d)
            self.assertEqual(len(bad), 2, bad)
            self.assertIn("planner/plan.cc:1: planner may not include kube/", bad[0])
            self.assertIn("planner is pure", bad[1])
            # The floor may not include what sits on it.
            WriteTree(d, {"planner/plan.cc": "", "base/status.h": '#include "planner/plan.h"\n'})
            self.assertEqual(len(layers.Violations(d)), 1)
            # The pure floor links no Boost at all, not even a header-only part.
            WriteTree(d, {"base/status.h": "#include <boost/container/small_vector.hpp>\n"})
            bad = layers.Violations(d)
            self.assertEqual(len(bad), 1, bad)
            self.assertIn("base is pure and may not include <boost/container", bad[0])

    def test_the_two_floors_and_the_object_room(self):
        table = layers.ReadTable(ROOT)
        self.assertEqual(table["base"][0], "pure")
        self.assertEqual(table["runtime"], ("io", {"base"}))
        self.assertEqual(table["objects"], ("pure", {"base"}))
        # The gang doctor reads objects without the planner.
        self.assertIn("objects", table["doctor"][1])
        self.assertNotIn("planner", table["doctor"][1])
        for folder, (kind, deps) in table.items():
            if kind == "pure":
                self.assertNotIn("runtime", deps, f"{folder} is pure but may include runtime/")

    def test_the_table_is_well_formed(self):
        table = layers.ReadTable(ROOT)
        self.assertIn("base", table)
        self.assertEqual(table["base"][1], set(), "the pure floor includes no other folder")
        # Lower floors come first: a folder only includes folders listed before it.
        seen = set()
        for folder, (_, deps) in table.items():
            self.assertLessEqual(deps, seen, f"{folder} includes a folder listed after it")
            seen.add(folder)

    def test_tidy_takes_its_folders_from_the_table(self):
        table = layers.ReadTable(ROOT)
        with open(os.path.join(ROOT, ".clang-tidy"), encoding="utf-8") as f:
            m = re.search(r"HeaderFilterRegex:\s*'([^']*)'", f.read())
        self.assertIsNotNone(m, ".clang-tidy has a HeaderFilterRegex")
        self.assertEqual(m.group(1), layers.TidyRegex(table),
                         "regenerate with: scripts/layers.py tidy-regex")
        with open(os.path.join(ROOT, "scripts", "tidy.sh"), encoding="utf-8") as f:
            self.assertRegex(f.read(), r"layers\.py\"? folders")


if __name__ == "__main__":
    unittest.main(verbosity=2)
