#!/usr/bin/env python3
"""Writes an SPDX 2.3 JSON SBOM of the fully static wasd binary: wasd itself
and every component compiled or linked into it, each named by the Debian
package that provided it on the build machine, with that package's version,
source package and a purl (pkg:deb/debian/NAME@VERSION?arch=..&upstream=..),
which is what image scanners match advisories against. A static binary shows
scanners no package database of its own, so without this file an OpenSSL or
glibc advisory would not be matched to the image (SECURITY.md "Supply chain").

Usage: sbom.py --binary FILE --version V --revision R --out FILE.spdx.json
              [--licenses-dir DIR]

With --licenses-dir, the licence texts go with it: DIR/LICENSE (wasd's own,
Apache-2.0, the repository's LICENSE file), DIR/<package>.copyright for each
Debian package found below (a copy of /usr/share/doc/<package>/copyright as
installed on the build machine; nothing is downloaded), and DIR/README
listing which component each file covers.

The components are found from files, not from a fixed package list: each
archive the link used and each header-only library compiled in is mapped to
its package with `dpkg-query -S`, then versioned with `dpkg-query -W`.
"""

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys

# What goes into the binary, by the file that carries it. Archives are
# linked (CMakeLists.txt WASD_STATIC_DEPS / -static-pie); headers are
# header-only libraries compiled into wasd's own objects.
# (component, how, [files], SPDX license of the upstream project)
COMPONENTS = [
    ("OpenSSL", "static library", ["{lib}/libssl.a", "{lib}/libcrypto.a"], "Apache-2.0"),
    ("yaml-cpp", "static library", ["{lib}/libyaml-cpp.a"], "MIT"),
    ("Boost (Asio, Beast, headers)", "header-only, compiled in",
     ["/usr/include/boost/version.hpp"], "BSL-1.0"),
    ("nlohmann/json", "header-only, compiled in", ["/usr/include/nlohmann/json.hpp"], "MIT"),
    ("libstdc++", "static library", ["{gcc:libstdc++.a}"],
     "GPL-3.0-or-later WITH GCC-exception-3.1"),
    ("libgcc", "static library", ["{gcc:libgcc.a}", "{gcc:libgcc_eh.a}"],
     "GPL-3.0-or-later WITH GCC-exception-3.1"),
    ("GNU C Library", "static library (static-pie)", ["{lib}/libc.a", "{lib}/libm.a"],
     "LGPL-2.1-or-later"),
]


def out(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60).stdout.strip()


def resolve(pattern, lib_dir):
    if pattern.startswith("{gcc:"):
        path = out(["g++", "-print-file-name=" + pattern[5:-1]])
    else:
        path = pattern.format(lib=lib_dir)
    path = os.path.realpath(path)
    if not os.path.exists(path):
        raise SystemExit("sbom.py: %s not found (is the build machine set up?)" % path)
    return path


def owner(path):
    """The Debian package (name:arch) that installed `path`."""
    # dpkg records the path as installed, which may be the unresolved one
    # (/lib vs /usr/lib on merged-/usr systems): try both.
    for candidate in (path, path.replace("/usr/lib/", "/lib/", 1)):
        p = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True,
                           timeout=60)
        if p.returncode == 0:
            # "libssl-dev:amd64: /usr/lib/...", or "name: path" for arch: all.
            return p.stdout.splitlines()[0].split(": ", 1)[0]
    raise SystemExit("sbom.py: no Debian package owns %s" % path)


def package_info(pkg):
    fields = out(["dpkg-query", "-W", "-f",
                  "${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}",
                  pkg]).split("\t")
    return dict(zip(("name", "version", "arch", "source", "source_version"), fields))


# wasd itself: the repository's LICENSE file is the Apache License 2.0.
WASD_LICENSE = "Apache-2.0"
WASD_COPYRIGHT = "Copyright 2026 The wasd Authors"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def linked_packages(lib_dir):
    """[(component, how, files, license, package info)], one per Debian
    package, in COMPONENTS order; a package that carries two components is
    listed once, under the first."""
    result, seen = [], set()
    for component, how, patterns, license_id in COMPONENTS:
        files = [resolve(p, lib_dir) for p in patterns]
        for pkg in sorted({owner(f) for f in files}):
            info = package_info(pkg)
            if info["name"] in seen:
                continue
            seen.add(info["name"])
            result.append((component, how, files, license_id, info))
    return result


def write_licenses(directory, linked):
    """The licence texts of wasd and of every linked package, from the files
    Debian installs (never fetched)."""
    os.makedirs(directory, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "LICENSE"), os.path.join(directory, "LICENSE"))
    lines = ["Licences of wasd and of what its fully static binary contains.", "",
             "LICENSE: wasd itself, %s (%s)." % (WASD_LICENSE, WASD_COPYRIGHT), ""]
    for component, how, _, license_id, info in linked:
        source = "/usr/share/doc/%s/copyright" % info["name"]
        if not os.path.isfile(source):
            raise SystemExit("sbom.py: %s is missing: the package %s %s installs no copyright "
                             "file (reinstall it)" % (source, info["name"], info["version"]))
        name = "%s.copyright" % info["name"]
        shutil.copyfile(source, os.path.join(directory, name))
        lines.append("%s: %s, %s (%s), from the Debian package %s %s (%s)." % (
            name, component, license_id, how, info["name"], info["version"], source))
    with open(os.path.join(directory, "README"), "w") as f:
        f.write("\n".join(lines) + "\n")


def spdx_id(text):
    return "SPDXRef-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in text)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--project-url", required=True, help="the project's source repository (downloadLocation)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--licenses-dir", help="also copy the licence texts here")
    a = ap.parse_args()

    lib_dir = "/usr/lib/" + out(["gcc", "-print-multiarch"])
    distro = ""
    if os.path.exists("/etc/os-release"):
        with open("/etc/os-release") as f:
            rel = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        distro = "%s-%s" % (rel.get("ID", "").strip('"'), rel.get("VERSION_ID", "").strip('"'))
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0") or 0)
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    digest = sha256(a.binary)

    wasd_id = "SPDXRef-Package-wasd"
    packages = [{
        "name": "wasd",
        "SPDXID": wasd_id,
        "versionInfo": a.version,
        "primaryPackagePurpose": "APPLICATION",
        "downloadLocation": ("git+%s@%s" % (a.project_url.rstrip("/"), a.revision)
                             if a.revision != "unknown" else a.project_url.rstrip("/")),
        "filesAnalyzed": False,
        "checksums": [{"algorithm": "SHA256", "checksumValue": digest}],
        # The repository's LICENSE (README.md "Licence").
        "licenseConcluded": WASD_LICENSE,
        "licenseDeclared": WASD_LICENSE,
        "copyrightText": WASD_COPYRIGHT,
        "comment": "fully static (static-pie) wasd binary, revision %s" % a.revision,
    }]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": wasd_id}]
    linked = linked_packages(lib_dir)
    if a.licenses_dir:
        write_licenses(a.licenses_dir, linked)
    for component, how, files, license_id, info in linked:
        pid = spdx_id("Package-deb-" + info["name"])
        purl = "pkg:deb/debian/%s@%s?arch=%s&upstream=%s" % (
            info["name"], info["version"], info["arch"], info["source"])
        if distro:
            purl += "&distro=" + distro
        packages.append({
            "name": info["name"],
            "SPDXID": pid,
            "versionInfo": info["version"],
            "supplier": "Organization: Debian",
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False,
            "sourceInfo": "built from the Debian source package %s %s" % (
                info["source"], info["source_version"]),
            "licenseConcluded": "NOASSERTION",
            "licenseDeclared": license_id,
            "copyrightText": "NOASSERTION",
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER",
                              "referenceType": "purl", "referenceLocator": purl}],
            "comment": "%s: %s (%s)" % (component, how, ", ".join(files)),
        })
        relationships.append({
            "spdxElementId": wasd_id,
            "relationshipType": "STATIC_LINK" if "static" in how else "CONTAINS",
            "relatedSpdxElement": pid})

    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": "wasd-%s" % a.version,
        # Unique per binary, as SPDX asks; not a URL anyone serves.
        "documentNamespace": "https://spdx.wasd.invalid/wasd-%s-%s" % (a.version, digest),
        "creationInfo": {"created": created,
                         "creators": ["Tool: wasd scripts/sbom.py"]},
        "packages": packages,
        "relationships": relationships,
    }
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
