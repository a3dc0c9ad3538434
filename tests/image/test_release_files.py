#!/usr/bin/env python3
"""The release's small files, without building anything (seconds):

- the krew manifest scripts/krew_manifest.py writes for a release tarball:
  only what krew itself cannot know, namely that the manifest describes
  this release (version vX.Y.Z of --version, the linux/amd64 selector, the
  tarball's sha256, the default uri at the GitHub release of tag vX.Y.Z or
  the --uri-template given) and that the script refuses a wrong file name
  or a version with a v. krew's own rules (schema, names, semver, selectors,
  the licence file, the install itself) are checked by krew's own code in
  tests/image/test_krew_real.py (sigs.k8s.io/krew v0.4.3), no longer by a
  reimplementation here;
- the licence files scripts/sbom.py --licenses-dir copies: wasd's LICENSE
  is the Apache License 2.0 text Debian ships, and every linked package's
  copyright file is the one dpkg installed;
- scripts/release.sh stops with a clear message when buildah is missing
  (unless --no-image), before building anything.
"""
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
SCRIPTS = os.path.join(SOURCE_DIR, "scripts")

def MakeTarball(directory, version):
    """A tarball shaped as release.sh makes it."""
    top = "wasd-%s-linux-amd64" % version
    path = os.path.join(directory, top + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for name, data in [("wasd", b"\x7fELF binary"), ("kubectl_complete-wasd", b"#!/bin/sh"),
                           ("LICENSE", b"Apache"),
                           ("licenses/LICENSE", b"Apache"), ("licenses/libssl-dev.copyright",
                                                            b"OpenSSL"), ("README.md", b"r")]:
            info = tarfile.TarInfo(top + "/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


# Where the release under test says it is published (a name nobody serves).
PROJECT = "https://git.example.org/platform/wasd"

class KrewManifest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wasd-krew-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.tarball = MakeTarball(self.dir, "0.1.0")
        self.path = os.path.join(self.dir, "wasd.yaml")

    def write(self, *extra, version="0.1.0", out=None):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, "krew_manifest.py"),
                               "--tarball", self.tarball, "--version", version, "--out",
                               out or self.path, "--project-url", PROJECT] + list(extra),
                              capture_output=True, text=True, timeout=60)

    def test_manifest_describes_the_tarball(self):
        p = self.write()
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path) as f:
            m = yaml.safe_load(f)
        self.assertEqual(m["metadata"]["name"], "wasd")
        pl, = m["spec"]["platforms"]
        self.assertEqual(m["spec"]["version"], "v0.1.0")
        self.assertEqual(pl["selector"], {"matchLabels": {"os": "linux", "arch": "amd64"}})
        with open(self.tarball, "rb") as f:
            self.assertEqual(pl["sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(pl["uri"], PROJECT + "/releases/download/v0.1.0/wasd-0.1.0-linux-amd64.tar.gz")
        self.assertEqual(m["spec"]["homepage"], PROJECT)
        self.assertEqual(pl["bin"], "wasd")
        # kubectl's completion helper is installed beside the plugin, and the
        # caveats say how to put it on PATH (krew links only bin).
        self.assertIn({"from": "wasd-0.1.0-linux-amd64/kubectl_complete-wasd", "to": "."},
                      pl["files"])
        self.assertIn("kubectl_complete-wasd", m["spec"]["caveats"])

    def test_uri_template(self):
        p = self.write("--uri-template", "https://dl.example.com/{version}/{tarball}")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path) as f:
            pl, = yaml.safe_load(f)["spec"]["platforms"]
        self.assertEqual(pl["uri"], "https://dl.example.com/0.1.0/wasd-0.1.0-linux-amd64.tar.gz")

    def test_refuses_a_wrong_file_name_and_a_v_version(self):
        p = self.write(out=os.path.join(self.dir, "kubectl-wasd.yaml"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("wasd.yaml", p.stderr)
        p = self.write(version="v0.1.0")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("without the v", p.stderr)


class KubectlCompletionHelper(unittest.TestCase):
    """kubectl_complete-wasd: what kubectl 1.26+ runs to complete `kubectl
    wasd ...`; release.sh ships it executable beside wasd in the tarball."""

    def test_answers_through_the_wasd_beside_it(self):
        wasd = os.environ.get("WASD_BIN")
        if not wasd:
            self.skipTest("WASD_BIN not set")
        d = tempfile.mkdtemp(prefix="wasd-complete-")
        self.addCleanup(shutil.rmtree, d, True)
        os.symlink(os.path.abspath(wasd), os.path.join(d, "wasd"))
        helper = os.path.join(d, "kubectl_complete-wasd")
        shutil.copy2(os.path.join(SCRIPTS, "kubectl_complete-wasd"), helper)
        self.assertTrue(os.access(helper, os.X_OK))
        # No kubectl-wasd on PATH: the wasd beside it must be the one used.
        env = {"PATH": "/usr/bin:/bin"}
        for words, want in ((["ex"], "explain\n"), (["explain", "-o", ""], "text\njson\nyaml\n")):
            p = subprocess.run([helper] + words, capture_output=True, text=True, timeout=60,
                               env=env)
            self.assertEqual((p.returncode, p.stdout, p.stderr), (0, want, ""), words)

    def test_release_puts_it_in_the_tarball(self):
        with open(os.path.join(SCRIPTS, "release.sh")) as f:
            text = f.read()
        self.assertIn('install -m 0755 "$root/scripts/kubectl_complete-wasd" '
                      '"$work/$name/kubectl_complete-wasd"', text)


class Licenses(unittest.TestCase):
    def test_repository_license_is_apache_2(self):
        with open(os.path.join(SOURCE_DIR, "LICENSE"), "rb") as f:
            ours = f.read()
        self.assertIn(b"Apache License\n                           Version 2.0, January 2004",
                      ours)
        debian = "/usr/share/common-licenses/Apache-2.0"
        if os.path.exists(debian):
            with open(debian, "rb") as f:
                self.assertEqual(ours, f.read())

    @unittest.skipUnless(shutil.which("dpkg-query") and shutil.which("g++"), "needs dpkg and g++")
    def test_sbom_copies_the_debian_copyright_files(self):
        d = tempfile.mkdtemp(prefix="wasd-licenses-")
        self.addCleanup(shutil.rmtree, d, True)
        binary = os.path.join(d, "wasd")
        with open(binary, "wb") as f:
            f.write(b"not really a binary")
        lic = os.path.join(d, "licenses")
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbom.py"), "--binary", binary,
                            "--version", "0.1.0", "--revision", "a" * 40, "--out",
                            os.path.join(d, "s.spdx.json"), "--licenses-dir", lic,
                            "--project-url", PROJECT],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = sorted(os.listdir(lic))
        with open(os.path.join(lic, "README")) as f:
            readme = f.read()
        # OpenSSL, Boost, nlohmann/json, yaml-cpp, glibc, libstdc++.
        for component in ("OpenSSL", "Boost", "nlohmann/json", "yaml-cpp", "GNU C Library",
                          "libstdc++"):
            self.assertIn(component, readme)
        copied = [f for f in files if f.endswith(".copyright")]
        self.assertGreaterEqual(len(copied), 6, files)
        for name in copied:
            with open(os.path.join(lic, name), "rb") as a, open(
                    "/usr/share/doc/%s/copyright" % name[:-len(".copyright")], "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        import json
        with open(os.path.join(d, "s.spdx.json")) as f:
            wasd, = [pk for pk in json.load(f)["packages"] if pk["name"] == "wasd"]
        self.assertEqual(wasd["licenseDeclared"], "Apache-2.0")
        self.assertNotEqual(wasd["copyrightText"], "NOASSERTION")
        self.assertEqual(wasd["downloadLocation"], "git+" + PROJECT + "@" + "a" * 40)

    def test_image_label_is_the_license(self):
        with open(os.path.join(SOURCE_DIR, "Dockerfile")) as f:
            self.assertRegex(f.read(), r"(?m)^ARG LICENSES=Apache-2.0$")


class ProjectUrl(unittest.TestCase):
    """Every URL of a release from the one setting, --project-url."""

    def test_release_refuses_to_run_without_it(self):
        d = tempfile.mkdtemp(prefix="wasd-nourl-")
        self.addCleanup(shutil.rmtree, d, True)
        env = {k: v for k, v in os.environ.items() if k != "WASD_PROJECT_URL"}
        for args in ([], ["--project-url", "http://plain.example/wasd"]):
            p = subprocess.run(["bash", os.path.join(SCRIPTS, "release.sh"), "--out", os.path.join(d, "out"),
                                "--build-dir", os.path.join(d, "never-built"), *args],
                               env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("set --project-url https://HOST/OWNER/wasd", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "never-built")))

    def test_packaged_chart_links_come_from_it(self):
        d = tempfile.mkdtemp(prefix="wasd-chart-url-")
        self.addCleanup(shutil.rmtree, d, True)
        p = subprocess.run(["bash", os.path.join(SCRIPTS, "package-chart.sh"), "--out", d,
                            "--project-url", PROJECT + "/"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        import tarfile
        with tarfile.open(p.stdout.strip()) as t:
            chart = yaml.safe_load(t.extractfile("wasd/Chart.yaml"))
            values = yaml.safe_load(t.extractfile("wasd/values.yaml"))
            texts = [t.extractfile(n).read().decode() for n in ("wasd/Chart.yaml", "wasd/values.yaml")]
        self.assertEqual(chart["home"], PROJECT)
        self.assertEqual(chart["sources"], [PROJECT])
        self.assertEqual(chart["icon"], PROJECT + "/raw/main/charts/wasd/icon.svg")
        self.assertEqual(values["prometheusRule"]["runbookBaseURL"], PROJECT + "/blob/main/docs/runbooks")
        for text in texts:
            self.assertNotIn("wasd-io/wasd", text)
        bad = subprocess.run(["bash", os.path.join(SCRIPTS, "package-chart.sh"), "--out", d,
                              "--project-url", "ftp://x"], capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("must be an https:// URL", bad.stderr)


class ReleaseWithoutBuildah(unittest.TestCase):
    def test_says_so_before_building(self):
        d = tempfile.mkdtemp(prefix="wasd-nobuildah-")
        self.addCleanup(shutil.rmtree, d, True)
        # A PATH with the usual tools but no buildah.
        bin_dir = os.path.join(d, "bin")
        os.makedirs(bin_dir)
        for tool in ("bash", "sed", "git", "dirname", "date", "mkdir", "cat", "env", "awk",
                     "find", "rm", "head"):
            found = shutil.which(tool)
            if found:
                os.symlink(found, os.path.join(bin_dir, tool))
        out = os.path.join(d, "out")
        p = subprocess.run(["bash", os.path.join(SCRIPTS, "release.sh"), "--out", out,
                            "--build-dir", os.path.join(d, "never-built"), "--project-url", PROJECT],
                           env={"PATH": bin_dir, "HOME": d}, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("buildah is not installed", p.stderr)
        self.assertIn("--no-image", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "never-built")), "it built before checking")


if __name__ == "__main__":
    unittest.main(verbosity=2)
