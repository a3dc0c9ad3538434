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
