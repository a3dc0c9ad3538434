#!/usr/bin/env python3
"""One version everywhere. The release version is written in CMakeLists.txt
(project version) and charts/wasd/Chart.yaml (version, appVersion); they
must agree, and the chart's default image tag must be its appVersion.
cmake/build_version.cmake turns the git state into the version `wasd
version` reports (and the image tag, and the packaged chart's version):
each of its forms is checked here on a scratch repository.
Fast, no build needed."""

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
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        return re.search(r"^project\(wasd VERSION (\d+\.\d+\.\d+)", f.read(), re.M).group(1)


class Versions(unittest.TestCase):
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
    """The version of a release is CMakeLists.txt's project version (the
    source of truth; release.sh refuses to run when the chart differs). It
    has its CHANGELOG section, and the binary says exactly it at the tag
    vX.Y.Z, or a describe form based on the last tag between tags."""

    def test_changelog_has_the_project_version(self):
        versions = changelog_versions()
        self.assertTrue(versions, "CHANGELOG.md has no `## X.Y.Z — YYYY-MM-DD` section")
        newest, _ = versions[0]
        self.assertEqual(newest, project_version(),
                         "the newest CHANGELOG section is not the project version")
        ordered = [as_tuple(v) for v, _ in versions]
        self.assertEqual(ordered, sorted(ordered, reverse=True), "CHANGELOG sections out of order")

    @unittest.skipUnless(shutil.which("git") and os.path.exists(os.path.join(SOURCE_DIR, ".git")),
                         "not a git checkout")
    def test_binary_version_agrees_with_the_tag(self):
        binary = os.environ.get("WASD_BIN")
        if not binary or not os.path.exists(binary):
            self.skipTest("no WASD_BIN (run through ctest)")
        first = subprocess.run([binary, "version"], capture_output=True, text=True,
                               timeout=60).stdout.splitlines()[0]
        m = re.match(r"^wasd (\S+) \(revision ([0-9a-f]{40}|unknown)", first)
        self.assertTrue(m, first)
        version, revision = m.group(1), m.group(2)
        if revision == "unknown":
            self.assertEqual(version, project_version())
            return
        tags = subprocess.run(["git", "-C", SOURCE_DIR, "tag", "--points-at", revision, "--list",
                               "v[0-9]*"], capture_output=True, text=True,
                              timeout=60).stdout.split()
        clean = version[:-len("-dirty")] if version.endswith("-dirty") else version
        if tags:
            # At a release tag: vX.Y.Z, the binary says X.Y.Z, and that is
            # the project version (and so the chart's and the CHANGELOG's).
            self.assertIn("v" + project_version(), tags)
            self.assertEqual(clean, project_version())
        else:
            # Between tags: LAST-N-gHASH, or PROJECT-gHASH before the first
            # tag; never a plain X.Y.Z that would pass for a release.
            m = re.match(r"^(\d+\.\d+\.\d+)(-\d+)?-g([0-9a-f]{7,})$", clean)
            self.assertTrue(m, "between tags the version is a describe form: " + version)
            self.assertTrue(revision.startswith(m.group(3)), (version, revision))
            self.assertLessEqual(as_tuple(m.group(1)), as_tuple(project_version()))


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

    def version(self):
        subprocess.run(["cmake", "-DSOURCE_DIR=" + self.repo, "-DOUT=" + self.header,
                        "-DPROJECT_VERSION=1.2.3", "-P", SCRIPT], check=True,
                       capture_output=True, timeout=60)
        with open(self.header) as f:
            text = f.read()
        version = re.search(r'#define WASD_VERSION "([^"]*)"', text).group(1)
        revision = re.search(r'#define WASD_REVISION "([^"]*)"', text).group(1)
        self.assertRegex(version, SEMVER)
        return version, revision

    def test_not_a_git_checkout(self):
        self.assertEqual(self.version(), ("1.2.3", "unknown"))

    def test_each_git_state(self):
        self.git("init", "-q")
        head = self.commit("one")
        self.assertEqual(self.version(), ("1.2.3-g" + head[:7], head))
        with open(os.path.join(self.repo, "f"), "a") as f:
            f.write("edit\n")
        self.assertEqual(self.version(), ("1.2.3-g%s-dirty" % head[:7], head))
        self.git("checkout", "-q", "f")
        self.git("tag", "v1.2.3")
        self.assertEqual(self.version(), ("1.2.3", head))
        head = self.commit("two")
        self.assertEqual(self.version(), ("1.2.3-1-g" + head[:7], head))
        # Tags that are not versions are not used.
        self.git("tag", "nightly")
        self.assertEqual(self.version()[0], "1.2.3-1-g" + head[:7])

    def test_header_rewritten_only_on_change(self):
        self.version()
        before = os.stat(self.header).st_mtime_ns
        os.utime(self.header, ns=(before - 10**9, before - 10**9))
        self.version()
        self.assertEqual(os.stat(self.header).st_mtime_ns, before - 10**9)


if __name__ == "__main__":
    unittest.main(verbosity=2)
