#!/usr/bin/env python3
"""One version everywhere. The release version is written in the VERSION
file (CMakeLists.txt reads it for project()) and charts/wasd/Chart.yaml
(version, appVersion); they must agree, and the chart's default image tag
must be its appVersion. cmake/build_version.cmake puts VERSION in the
binary whatever the git state (a clone without tags, a tarball without
.git), and the git revision beside it when there is one: each case is
checked here on a scratch tree. Fast, no build needed."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
SCRIPT = os.path.join(SOURCE_DIR, "cmake", "build_version.cmake")
CHART = os.path.join(SOURCE_DIR, "charts", "wasd")
# SemVer 2 without build metadata: what helm accepts as a chart version and
# what an image tag can carry.
SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")


def project_version():
    with open(os.path.join(SOURCE_DIR, "VERSION")) as f:
        return f.readline().strip()


class Versions(unittest.TestCase):
    def test_version_file_is_semver_and_cmake_reads_it(self):
        self.assertRegex(project_version(), SEMVER)
        with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
            cmake = f.read()
        self.assertIn('file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/VERSION"', cmake)
        self.assertNotRegex(cmake, r"project\(wasd VERSION \d")

    def test_cmake_and_chart_agree(self):
        with open(os.path.join(CHART, "Chart.yaml")) as f:
            chart = yaml.safe_load(f)
        self.assertEqual(chart["version"], project_version())
        self.assertEqual(str(chart["appVersion"]), project_version())

    def test_default_image_tag_is_the_app_version(self):
        with open(os.path.join(CHART, "values.yaml")) as f:
            values = yaml.safe_load(f)
        self.assertEqual(values["image"]["tag"], "")
        self.assertEqual(values["image"]["digest"], "")
        self.assertTrue(values["image"]["repository"])


def changelog_versions():
    """The `## X.Y.Z — YYYY-MM-DD` headings of CHANGELOG.md, newest first."""
    with open(os.path.join(SOURCE_DIR, "CHANGELOG.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$", text, re.M)


def as_tuple(version):
    return tuple(int(x) for x in version.split("."))


class ReleaseAgreement(unittest.TestCase):
    """The version of a release is the VERSION file (the source of truth;
    release.sh refuses to run when the chart differs). It has its CHANGELOG
    section, and the binary says exactly it, with the git revision it was
    built from as extra information."""

    def test_changelog_has_the_project_version(self):
        versions = changelog_versions()
        self.assertTrue(versions, "CHANGELOG.md has no `## X.Y.Z — YYYY-MM-DD` section")
        newest, _ = versions[0]
        self.assertEqual(newest, project_version(),
                         "the newest CHANGELOG section is not the project version")
        ordered = [as_tuple(v) for v, _ in versions]
        self.assertEqual(ordered, sorted(ordered, reverse=True), "CHANGELOG sections out of order")

    def test_binary_says_the_version_file(self):
        binary = os.environ.get("WASD_BIN")
        if not binary or not os.path.exists(binary):
            self.skipTest("no WASD_BIN (run through ctest)")
        short = subprocess.run([binary, "version", "--short"], capture_output=True, text=True,
                               timeout=60)
        self.assertEqual((short.returncode, short.stdout), (0, project_version() + "\n"))
        info = json.loads(subprocess.run([binary, "version", "-o", "json"], capture_output=True,
                                         text=True, timeout=60, check=True).stdout)
        self.assertEqual(info["version"], project_version())
        if shutil.which("git") and os.path.exists(os.path.join(SOURCE_DIR, ".git")):
            head = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "HEAD"],
                                  capture_output=True, text=True, timeout=60).stdout.strip()
            # The binary may be older than HEAD, never another repository's.
            self.assertRegex(info["revision"], r"^[0-9a-f]{40}$")
            subprocess.run(["git", "-C", SOURCE_DIR, "merge-base", "--is-ancestor",
                            info["revision"], head], check=True, timeout=60)


@unittest.skipUnless(shutil.which("git") and shutil.which("cmake"), "needs git and cmake")
class BuildVersion(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wasd-version-")
        self.repo = os.path.join(self.dir, "src")
        os.makedirs(self.repo)
        self.header = os.path.join(self.dir, "build_version.h")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def git(self, *args):
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_GLOBAL="/dev/null",
                   GIT_CONFIG_NOSYSTEM="1")
        return subprocess.run(["git", "-C", self.repo] + list(args), check=True, env=env,
                              capture_output=True, text=True, timeout=60).stdout.strip()

    def commit(self, text):
        with open(os.path.join(self.repo, "f"), "w") as f:
            f.write(text)
        self.git("add", "f")
        self.git("commit", "-qm", text)
        return self.git("rev-parse", "HEAD")

    def run_script(self):
        return subprocess.run(["cmake", "-DSOURCE_DIR=" + self.repo, "-DOUT=" + self.header,
                               "-P", SCRIPT], capture_output=True, text=True, timeout=60)

    def version(self):
        """(WASD_VERSION, WASD_REVISION, WASD_TREE_STATE) of the scratch tree."""
        p = self.run_script()
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.header) as f:
            text = f.read()
        got = tuple(re.search(r'#define %s "([^"]*)"' % name, text).group(1)
                    for name in ("WASD_VERSION", "WASD_REVISION", "WASD_TREE_STATE"))
        self.assertRegex(got[0], SEMVER)
        return got

    def write_version(self, text):
        with open(os.path.join(self.repo, "VERSION"), "w") as f:
            f.write(text)

    def test_not_a_git_checkout(self):
        self.write_version("1.2.3\n")
        self.assertEqual(self.version(), ("1.2.3", "", ""))

    def test_a_version_that_is_not_semver_stops_the_build(self):
        for bad in ("v1.2.3\n", "1.2\n", "1.2.3+build\n", ""):
            with self.subTest(bad=bad):
                self.write_version(bad)
                p = self.run_script()
                self.assertNotEqual(p.returncode, 0)
                self.assertIn("is not X.Y.Z[-PRERELEASE]", " ".join(p.stderr.split()))
        self.write_version("1.3.0-rc.1\n")
        self.assertEqual(self.version()[0], "1.3.0-rc.1")

    def test_each_git_state(self):
        # Tags do not change the version: a clone without them (a CI
        # checkout, a fork) reports what the release does.
        self.write_version("1.2.3\n")
        self.git("init", "-q")
        self.git("add", "VERSION")
        head = self.commit("one")
        self.assertEqual(self.version(), ("1.2.3", head, "clean"))
        with open(os.path.join(self.repo, "f"), "a") as f:
            f.write("edit\n")
        self.assertEqual(self.version(), ("1.2.3", head, "dirty"))
        self.git("checkout", "-q", "f")
        self.git("tag", "v9.9.9")
        self.assertEqual(self.version(), ("1.2.3", head, "clean"))
        head = self.commit("two")
        self.assertEqual(self.version(), ("1.2.3", head, "clean"))

    def test_header_rewritten_only_on_change(self):
        self.write_version("1.2.3\n")
        self.version()
        before = os.stat(self.header).st_mtime_ns
        os.utime(self.header, ns=(before - 10**9, before - 10**9))
        self.version()
        self.assertEqual(os.stat(self.header).st_mtime_ns, before - 10**9)


if __name__ == "__main__":
    unittest.main(verbosity=2)
