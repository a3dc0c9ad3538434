#!/usr/bin/env python3
"""REAL KREW (issue 41): the plugin manifest scripts/krew_manifest.py writes is
checked and installed by krew itself, sigs.k8s.io/krew v0.4.3 built from its
Go module (tests/tools/krew, `scripts/components.sh krew`), with the real
kubectl v1.37.2 of the control plane components. No cluster is needed.

The release tarball is laid out as scripts/release.sh lays it out (one top
directory wasd-VERSION-linux-amd64 with wasd, kubectl_complete-wasd, LICENSE, README.md,
SECURITY.md, CHANGELOG.md and the licenses/ scripts/sbom.py copies), from
$WASD_BIN, and served over HTTP on 127.0.0.1 (the manifest's uri points
there; nothing leaves the machine). Proven:

- krew's validator (validate-krew-manifest, which also installs the plugin
  into a throwaway KREW_ROOT and looks for the licence file) accepts the
  manifest;
- it refuses manifests krew must not take: metadata.name not the file name,
  a file not named after the plugin, a version without the leading v, a
  sha256 that is not the tarball's;
- `kubectl krew install --manifest=wasd.yaml --archive=TARBALL` into a
  throwaway KREW_ROOT installs it, and `kubectl wasd explain --help`, run
  by the real kubectl through $KREW_ROOT/bin, prints explain's help;
  kubectl_complete-wasd is installed beside it and, linked onto PATH as the
  manifest's caveats say, the real kubectl completes `kubectl wasd ex` to
  explain and `kubectl wasd explain -o ` to the output formats through it;
- from a local index (a git repository with plugins/wasd.yaml, added with
  `kubectl krew index add`), `kubectl krew install INDEX/wasd` downloads
  the tarball from the manifest's uri, checks its sha256, and the
  installed plugin runs the same way; `kubectl krew list` names it.
"""
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import unittest

import yaml

from lib import components
from lib.paths import SOURCE_DIR, WASD

SCRIPTS = os.path.join(SOURCE_DIR, "scripts")
HELP = 'Answers "why is my gang Pending?" for an opted-in Deployment'


def release_tarball(directory, version):
    """wasd-VERSION-linux-amd64.tar.gz as scripts/release.sh makes it, from $WASD_BIN."""
    top = "wasd-%s-linux-amd64" % version
    stage = os.path.join(directory, "stage", top)
    os.makedirs(stage)
    shutil.copy2(WASD, os.path.join(stage, "wasd"))
    shutil.copy2(os.path.join(SCRIPTS, "kubectl_complete-wasd"), stage)
    for f in ("LICENSE", "README.md", "SECURITY.md", "CHANGELOG.md"):
        shutil.copy2(os.path.join(SOURCE_DIR, f), stage)
    subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbom.py"), "--binary", WASD,
                    "--version", version, "--revision", "0" * 40,
                    "--out", os.path.join(directory, "sbom.spdx.json"),
                    "--licenses-dir", os.path.join(stage, "licenses"),
                    "--project-url", "https://git.example.org/platform/wasd"],
                   check=True, capture_output=True, timeout=300)
    path = os.path.join(directory, top + ".tar.gz")
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        tar.add(stage, arcname=top)
    shutil.rmtree(os.path.join(directory, "stage"))
    return path


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class KrewReal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.krew = components.module_tool("krew", "kubectl-krew")
        cls.validator = components.module_tool("krew", "validate-krew-manifest")
        cls.kubectl = components.tool("kubectl")
        cls.dir = tempfile.mkdtemp(prefix="wasd-krew-real-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        out = subprocess.run([WASD, "version"], capture_output=True, text=True, timeout=30,
                             check=True).stdout
        # `wasd version` prints "wasd VERSION (...)"; krew wants semver, so a
        # describe suffix (0.1.0-5-gabc) is fine, a dirty tree too.
        cls.version = out.split()[1]
        cls.downloads = os.path.join(cls.dir, "downloads")
        os.makedirs(cls.downloads)
        cls.tarball = release_tarball(cls.downloads, cls.version)
        handler = functools.partial(Quiet, directory=cls.downloads)
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.addClassCleanup(cls.thread.join, 10)
        cls.addClassCleanup(cls.server.server_close)
        cls.addClassCleanup(cls.server.shutdown)
        cls.manifest = os.path.join(cls.dir, "wasd.yaml")
        subprocess.run([sys.executable, os.path.join(SCRIPTS, "krew_manifest.py"),
                        "--tarball", cls.tarball, "--version", cls.version,
                        "--out", cls.manifest, "--uri-template",
                        "http://127.0.0.1:%d/{tarball}" % cls.server.server_address[1],
                        "--project-url", "https://git.example.org/platform/wasd"],
                       check=True, capture_output=True, timeout=60)

    def env(self, krew_root):
        """kubectl and kubectl-krew on PATH (krew finds kubectl there, as users have it);
        HOME and KREW_ROOT throwaway; the default index is never fetched."""
        home = os.path.join(self.dir, "home")
        os.makedirs(home, exist_ok=True)
        path = [os.path.join(krew_root, "bin"), os.path.dirname(self.krew),
                os.path.dirname(self.kubectl), "/usr/bin", "/bin"]
        return {"PATH": os.pathsep.join(path), "HOME": home, "KREW_ROOT": krew_root,
                "KREW_NO_UPGRADE_CHECK": "1",
                # If krew wanted its default index, it would clone a local
                # path that does not exist, not github.com.
                "KREW_DEFAULT_INDEX_URI": os.path.join(self.dir, "no-default-index"),
                "GIT_CONFIG_NOSYSTEM": "1", "KUBECONFIG": os.path.join(home, "none")}

    def run_tool(self, args, env, timeout=300):
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def krew_root(self, name):
        root = os.path.join(self.dir, name)
        os.makedirs(root)
        return root

    def assert_plugin_runs(self, env):
        p = self.run_tool([self.kubectl, "plugin", "list"], env, 60)
        self.assertIn(os.path.join(env["KREW_ROOT"], "bin", "kubectl-wasd"), p.stdout,
                      p.stdout + p.stderr)
        p = self.run_tool([self.kubectl, "wasd", "explain", "--help"], env, 60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(HELP, p.stdout)
        self.assertIn("kubectl wasd explain", p.stdout)
        self.assertIn("--namespace", p.stdout)
        # The licence files were installed beside the binary.
        installed = os.path.join(env["KREW_ROOT"], "store", "wasd", "v" + self.version)
        self.assertTrue(os.path.isfile(os.path.join(installed, "LICENSE")), installed)
        self.assertTrue(os.path.isdir(os.path.join(installed, "licenses")), installed)
        # kubectl_complete-wasd too; linked onto PATH as the caveats say
        # (krew links only bin), kubectl completes `kubectl wasd ex` through it.
        helper = os.path.join(installed, "kubectl_complete-wasd")
        self.assertTrue(os.access(helper, os.X_OK), installed)
        os.symlink(helper, os.path.join(env["KREW_ROOT"], "bin", "kubectl_complete-wasd"))
        p = self.run_tool([self.kubectl, "__complete", "wasd", "ex"], env, 60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.splitlines()[0], "explain", p.stdout + p.stderr)
        p = self.run_tool([self.kubectl, "__complete", "wasd", "explain", "-o", ""], env, 60)
        self.assertEqual(p.stdout.splitlines()[:3], ["text", "json", "yaml"], p.stdout + p.stderr)

    def validate(self, manifest):
        # The validator installs into a KREW_ROOT of its own under TMPDIR.
        env = self.env(os.path.join(self.dir, "unused"))
        env["TMPDIR"] = self.dir
        return self.run_tool([self.validator, "--manifest", manifest], env)

    def test_validator_accepts_the_manifest(self):
        p = self.validate(self.manifest)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_validator_refuses_broken_manifests(self):
        with open(self.manifest) as f:
            good = yaml.safe_load(f)

        def broken(file_name, change):
            m = yaml.safe_load(yaml.safe_dump(good))
            change(m)
            d = tempfile.mkdtemp(dir=self.dir, prefix="broken-")
            path = os.path.join(d, file_name)
            with open(path, "w") as f:
                yaml.safe_dump(m, f)
            return self.validate(path)

        platform = lambda m: m["spec"]["platforms"][0]  # noqa: E731
        cases = [
            ("metadata.name", "wasd.yaml", lambda m: m["metadata"].update(name="kubectl-wasd"),
             'plugin should be named "wasd", not "kubectl-wasd"'),
            ("file name", "kubectl-wasd.yaml", lambda m: None,
             'plugin should be named "kubectl-wasd", not "wasd"'),
            ("version", "wasd.yaml", lambda m: m["spec"].update(version=self.version),
             "not starting with 'v'"),
            ("sha256", "wasd.yaml", lambda m: platform(m).update(sha256="0" * 64),
             "checksum does not match"),
        ]
        for what, file_name, change, said in cases:
            with self.subTest(what):
                p = broken(file_name, change)
                self.assertNotEqual(p.returncode, 0, what + " was accepted:\n" + p.stderr)
                # klog.Fatal's message ("F<date> ... main.go:64] why", maybe over
                # several lines), not its stack dump
                out = p.stdout + p.stderr
                fatal = re.search(r"(?ms)^F\d{4} [^\]]*\] (.*?)^k8s\.io/klog", out)
                self.assertTrue(fatal, out)
                self.assertIn(said, fatal.group(1))

    def test_install_from_the_manifest_and_archive(self):
        env = self.env(self.krew_root("root-archive"))
        p = self.run_tool([self.kubectl, "krew", "install", "--manifest=" + self.manifest,
                           "--archive=" + self.tarball], env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn('Installed plugin: wasd\n', p.stdout + p.stderr)
        self.assert_plugin_runs(env)

    def test_install_from_a_local_index(self):
        index = os.path.join(self.dir, "index")
        os.makedirs(os.path.join(index, "plugins"))
        shutil.copy2(self.manifest, os.path.join(index, "plugins", "wasd.yaml"))
        env = self.env(self.krew_root("root-index"))
        git = ["git", "-C", index, "-c", "user.name=wasd test", "-c",
               "user.email=test@wasd.invalid", "-c", "commit.gpgsign=false"]
        for args in (["init", "-q", "-b", "main"], ["add", "plugins/wasd.yaml"],
                     ["commit", "-q", "-m", "wasd"]):
            subprocess.run(git + args, env=env, check=True, capture_output=True, timeout=60)
        p = self.run_tool([self.kubectl, "krew", "index", "add", "wasd-local", index], env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = self.run_tool([self.kubectl, "krew", "install", "wasd-local/wasd"], env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Installed plugin: wasd\n", p.stdout + p.stderr)
        p = self.run_tool([self.kubectl, "krew", "list"], env, 60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("wasd-local/wasd", p.stdout)
        self.assert_plugin_runs(env)
        # The default index was never added (it would be github.com).
        p = self.run_tool([self.kubectl, "krew", "index", "list"], env, 60)
        self.assertNotIn("default", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
