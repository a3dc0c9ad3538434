#!/usr/bin/env python3
"""The release's small files, without building anything (seconds):

- the krew manifest scripts/krew_manifest.py writes for a release tarball,
  checked against krew's manifest rules as krew publishes them
  (kubernetes-sigs/krew: the Plugin types of pkg/index/types.go, the checks
  of internal/index/validation/validate.go, and what its
  validate-krew-manifest command adds: the file is named <plugin>.yaml,
  each platform's selector matches a platform krew knows and no two
  overlap, the installed files include a licence file). The checks are
  written here (KrewProblems); each is shown to fail on a broken manifest;
- the licence files scripts/sbom.py --licenses-dir copies: wasd's LICENSE
  is the Apache License 2.0 text Debian ships, and every linked package's
  copyright file is the one dpkg installed;
- scripts/release.sh stops with a clear message when buildah is missing
  (unless --no-image), before building anything.
"""
import hashlib
import io
import os
import re
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

# krew's pkg/constants.
KREW_API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
KREW_KIND = "Plugin"
# The <os, arch> pairs krew's validator tries each selector against.
KREW_PLATFORMS = [(o, a) for o in ("darwin", "linux", "windows")
                  for a in ("386", "amd64", "arm", "arm64")]
KREW_LICENSE_FILES = {"license", "license.txt", "license.md", "licenses", "licenses.txt",
                      "licenses.md", "copying", "copying.txt"}
WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {"COM%d" % i for i in range(1, 10)} | {
    "LPT%d" % i for i in range(1, 10)}
# k8s.io/apimachinery util/version ParseSemantic, with krew's leading "v".
SEMVER_V = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                      r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
# The fields of krew's Plugin/PluginSpec/Platform/FileOperation and of the
# metav1 TypeMeta/ObjectMeta/LabelSelector parts a manifest uses.
PLUGIN_FIELDS = {"apiVersion", "kind", "metadata", "spec"}
SPEC_FIELDS = {"version", "shortDescription", "description", "caveats", "homepage", "platforms"}
PLATFORM_FIELDS = {"uri", "sha256", "selector", "files", "bin"}
FILE_FIELDS = {"from", "to"}
SELECTOR_FIELDS = {"matchLabels", "matchExpressions"}


def SelectorMatches(selector, os_name, arch):
    labels = {"os": os_name, "arch": arch}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        op, values = e.get("operator"), e.get("values") or []
        have = e.get("key") in labels
        value = labels.get(e.get("key"))
        if op == "In" and value not in values or op == "NotIn" and value in values \
                or op == "Exists" and not have or op == "DoesNotExist" and have:
            return False
    return True


def KrewProblems(path, text):
    """What krew would refuse in the manifest file `path` with content `text`."""
    problems = []
    try:
        p = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return ["not YAML: %s" % e]
    if not isinstance(p, dict):
        return ["not a mapping"]
    name = os.path.basename(path)
    if not name.endswith(".yaml"):
        problems.append("the manifest file must end in .yaml")
    plugin = name[:-len(".yaml")]
    for where, obj, fields in [("", p, PLUGIN_FIELDS), ("spec.", p.get("spec") or {}, SPEC_FIELDS)]:
        for k in obj:
            if k not in fields:
                problems.append("unknown field %s%s" % (where, k))
    if p.get("apiVersion") != KREW_API_VERSION:
        problems.append("apiVersion %r is not %s" % (p.get("apiVersion"), KREW_API_VERSION))
    if p.get("kind") != KREW_KIND:
        problems.append("kind %r is not Plugin" % p.get("kind"))
    if not re.match(r"^[\w-]+$", plugin) or plugin.upper() in WINDOWS_RESERVED:
        problems.append("plugin name %r is not allowed" % plugin)
    if (p.get("metadata") or {}).get("name") != plugin:
        problems.append("metadata.name must be %r (the file name)" % plugin)
    spec = p.get("spec") or {}
    short = spec.get("shortDescription") or ""
    if not short:
        problems.append("spec.shortDescription is empty")
    if "\n" in short or "\r" in short:
        problems.append("spec.shortDescription has a line break")
    if not isinstance(spec.get("version"), str) or not SEMVER_V.match(spec["version"]):
        problems.append("spec.version %r is not a semantic version with a leading v"
                        % spec.get("version"))
    platforms = spec.get("platforms") or []
    if not platforms:
        problems.append("spec.platforms is empty")
    for i, pl in enumerate(platforms):
        at = "spec.platforms[%d]" % i
        for k in pl:
            if k not in PLATFORM_FIELDS:
                problems.append("unknown field %s.%s" % (at, k))
        if not pl.get("uri"):
            problems.append(at + ".uri is empty")
        if not re.match(r"^[a-f0-9]{64}$", str(pl.get("sha256") or "")):
            problems.append(at + ".sha256 is not 64 lower-case hex digits")
        if not pl.get("bin"):
            problems.append(at + ".bin is empty")
        files = pl.get("files")
        if files is not None:
            if not files:
                problems.append(at + ".files is present but empty")
            for f in files:
                if set(f) - FILE_FIELDS or not f.get("from") or not f.get("to"):
                    problems.append(at + ".files entry needs exactly from and to")
        sel = pl.get("selector")
        if not isinstance(sel, dict) or not sel.get("matchLabels") and not sel.get(
                "matchExpressions"):
            problems.append(at + ".selector is missing or empty")
            continue
        if set(sel) - SELECTOR_FIELDS:
            problems.append(at + ".selector has unknown fields")
        keys = list(sel.get("matchLabels") or {}) + [e.get("key") for e in
                                                     sel.get("matchExpressions") or []]
        if any(k not in ("os", "arch") for k in keys):
            problems.append(at + ".selector uses a key other than os and arch")
        if not any(SelectorMatches(sel, o, a) for o, a in KREW_PLATFORMS):
            problems.append(at + ".selector matches no platform krew supports")
    for o, a in KREW_PLATFORMS:
        hits = [i for i, pl in enumerate(platforms)
                if isinstance(pl.get("selector"), dict) and SelectorMatches(pl["selector"], o, a)]
        if len(hits) > 1:
            problems.append("platforms %s overlap on %s/%s" % (hits, o, a))
    return problems


def InstalledFiles(platform, tarball):
    """What krew would put in the plugin's directory: each `from` (a path or
    glob in the unpacked archive) copied under `to`."""
    import fnmatch
    with tarfile.open(tarball) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
    installed = set()
    for f in platform.get("files") or [{"from": "*", "to": "."}]:
        for n in names:
            if fnmatch.fnmatch(n, f["from"]) or n.startswith(f["from"].rstrip("/") + "/"):
                base = f["from"].rstrip("/").rsplit("/", 1)[0] if "/" in f["from"] else ""
                rel = n[len(base) + 1:] if base else n
                installed.add(os.path.normpath(os.path.join(f["to"], rel)))
    return installed


def MakeTarball(directory, version):
    """A tarball shaped as release.sh makes it."""
    top = "wasd-%s-linux-amd64" % version
    path = os.path.join(directory, top + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for name, data in [("wasd", b"\x7fELF binary"), ("LICENSE", b"Apache"),
                           ("licenses/LICENSE", b"Apache"), ("licenses/libssl-dev.copyright",
                                                            b"OpenSSL"), ("README.md", b"r")]:
            info = tarfile.TarInfo(top + "/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


class KrewManifest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wasd-krew-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.tarball = MakeTarball(self.dir, "0.1.0")
        self.path = os.path.join(self.dir, "wasd.yaml")

    def write(self, *extra, version="0.1.0", out=None):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, "krew_manifest.py"),
                               "--tarball", self.tarball, "--version", version, "--out",
                               out or self.path] + list(extra),
                              capture_output=True, text=True, timeout=60)

    def test_manifest_passes_krew_checks(self):
        p = self.write()
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path) as f:
            text = f.read()
        self.assertEqual(KrewProblems(self.path, text), [])
        m = yaml.safe_load(text)
        pl, = m["spec"]["platforms"]
        self.assertEqual(m["spec"]["version"], "v0.1.0")
        self.assertEqual(pl["selector"], {"matchLabels": {"os": "linux", "arch": "amd64"}})
        with open(self.tarball, "rb") as f:
            self.assertEqual(pl["sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(pl["uri"], "https://github.com/wasd-io/wasd/releases/download/v0.1.0/"
                         "wasd-0.1.0-linux-amd64.tar.gz")
        # krew links kubectl-wasd to bin; bin and a licence file are installed.
        installed = InstalledFiles(pl, self.tarball)
        self.assertIn(pl["bin"], installed)
        self.assertTrue({os.path.basename(f).lower() for f in installed} & KREW_LICENSE_FILES,
                        installed)

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

    def test_the_checks_fail_on_broken_manifests(self):
        self.assertEqual(self.write().returncode, 0)
        with open(self.path) as f:
            good = yaml.safe_load(f)

        def broken(change):
            m = yaml.safe_load(yaml.safe_dump(good))
            change(m)
            return KrewProblems(self.path, yaml.safe_dump(m))

        pl = lambda m: m["spec"]["platforms"][0]  # noqa: E731
        cases = {
            "apiVersion": lambda m: m.update(apiVersion="krew.googlecontainertools.github.com/v1"),
            "kind": lambda m: m.update(kind="Plugins"),
            "metadata.name": lambda m: m["metadata"].update(name="kubectl-wasd"),
            "shortDescription": lambda m: m["spec"].update(shortDescription="a\nb"),
            "spec.version": lambda m: m["spec"].update(version="0.1.0"),
            "sha256": lambda m: pl(m).update(sha256="ABC"),
            "bin": lambda m: pl(m).pop("bin"),
            "uri": lambda m: pl(m).pop("uri"),
            "selector": lambda m: pl(m).pop("selector"),
            "selector key": lambda m: pl(m)["selector"]["matchLabels"].update(distro="debian"),
            "no platform": lambda m: pl(m)["selector"]["matchLabels"].update(os="plan9"),
            "files": lambda m: pl(m).update(files=[]),
            "from": lambda m: pl(m)["files"][0].pop("from"),
            "unknown field": lambda m: pl(m).update(url="x"),
            "overlap": lambda m: m["spec"]["platforms"].append(dict(pl(m))),
            "platforms": lambda m: m["spec"].update(platforms=[]),
        }
        for what, change in cases.items():
            with self.subTest(what):
                self.assertTrue(broken(change), what + " was not caught")
        self.assertTrue(KrewProblems(os.path.join(self.dir, "wasd.yml"), yaml.safe_dump(good)))


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
                            os.path.join(d, "s.spdx.json"), "--licenses-dir", lic],
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
        self.assertEqual(wasd["downloadLocation"], "git+https://github.com/wasd-io/wasd@" + "a" * 40)

    def test_image_label_is_the_license(self):
        with open(os.path.join(SOURCE_DIR, "Dockerfile")) as f:
            self.assertRegex(f.read(), r"(?m)^ARG LICENSES=Apache-2.0$")


class ReleaseWithoutBuildah(unittest.TestCase):
    def test_says_so_before_building(self):
        d = tempfile.mkdtemp(prefix="wasd-nobuildah-")
        self.addCleanup(shutil.rmtree, d, True)
        # A PATH with the usual tools but no buildah.
        bin_dir = os.path.join(d, "bin")
        os.makedirs(bin_dir)
        for tool in ("bash", "sed", "git", "dirname", "date", "mkdir", "cat", "env", "awk",
                     "find", "rm"):
            found = shutil.which(tool)
            if found:
                os.symlink(found, os.path.join(bin_dir, tool))
        out = os.path.join(d, "out")
        p = subprocess.run(["bash", os.path.join(SCRIPTS, "release.sh"), "--out", out,
                            "--build-dir", os.path.join(d, "never-built")],
                           env={"PATH": bin_dir, "HOME": d}, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("buildah is not installed", p.stderr)
        self.assertIn("--no-image", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "never-built")), "it built before checking")


if __name__ == "__main__":
    unittest.main(verbosity=2)
