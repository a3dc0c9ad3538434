#!/usr/bin/env python3
"""Writes the krew plugin manifest of `kubectl wasd` (krew's Plugin object,
apiVersion krew.googlecontainertools.github.com/v1alpha2) for one release
tarball, so `kubectl krew install --manifest=wasd.yaml` (or a custom index)
installs the plugin.

Usage: krew_manifest.py --tarball FILE --version X.Y.Z --out DIR/wasd.yaml
                        [--uri-template T] [--os linux] [--arch amd64]

The tarball is scripts/release.sh's wasd-VERSION-linux-ARCH.tar.gz: one
top directory holding the static `wasd` and LICENSE. krew unpacks it, copies
the `files` entries into the plugin's directory and links
`kubectl-wasd` -> `bin`; wasd run under the name kubectl-wasd behaves as the
plugin. The uri is T with {version} and {tarball} replaced (default: the
GitHub release download URL of tag v{version}); the sha256 is the tarball's.
The manifest must be named after the plugin (krew: "<name>.yaml").
"""

import argparse
import hashlib
import os
import sys
import tarfile

# Where a release of the project at PROJECT is downloaded from, when no
# --uri-template says otherwise (a GitHub-style release layout).
DEFAULT_URI = "{project}/releases/download/v{version}/{tarball}"
PLUGIN = "wasd"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def top_directory(tarball):
    """The one top-level directory of the tarball, and that it holds wasd and LICENSE."""
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) != 1:
        raise SystemExit("krew_manifest.py: %s has %d top-level entries, want one directory"
                         % (tarball, len(tops)))
    top, = tops
    for want in ("wasd", "LICENSE"):
        if top + "/" + want not in names:
            raise SystemExit("krew_manifest.py: %s has no %s/%s" % (tarball, top, want))
    return top


def quote(text):
    """A YAML double-quoted scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def manifest(version, uri, digest, top, os_name, arch, homepage):
    # Written as text (not a YAML library's dump) so the file reads like the
    # manifests of krew-index.
    return f"""apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: {PLUGIN}
spec:
  version: {quote("v" + version)}
  homepage: {homepage}
  shortDescription: Explain why a gang-scheduled Deployment is pending
  description: |
    wasd brings Workload-Aware Scheduling (gang scheduling) to apps/v1
    Deployments. As a kubectl plugin it explains an opted-in Deployment:
    the gang, its PodGroup and members, and why the gang does not run
    (`kubectl wasd explain deployment/NAME`), and checks manifests offline
    (`kubectl wasd check -f FILE`).
  caveats: |
    The plugin is the whole wasd binary (fully static, Linux only); it uses
    your kubeconfig as kubectl does. The webhook and reconciler run in the
    cluster from the Helm chart, not from this plugin.
    Completion of `kubectl wasd ...` (kubectl 1.26 or later): krew links only
    kubectl-wasd, so link kubectl_complete-wasd from the plugin's directory:
      ln -s "$(dirname "$(readlink -f "$(command -v kubectl-wasd)")")/kubectl_complete-wasd" \\
        "${{KREW_ROOT:-$HOME/.krew}}/bin/"
  platforms:
  - selector:
      matchLabels:
        os: {os_name}
        arch: {arch}
    uri: {quote(uri)}
    sha256: {quote(digest)}
    files:
    - from: {quote(top + "/wasd")}
      to: "."
    - from: {quote(top + "/kubectl_complete-wasd")}
      to: "."
    - from: {quote(top + "/LICENSE")}
      to: "."
    - from: {quote(top + "/licenses")}
      to: "."
    bin: wasd
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tarball", required=True)
    ap.add_argument("--version", required=True, help="X.Y.Z (the manifest says vX.Y.Z)")
    ap.add_argument("--out", required=True, help="the manifest file, named wasd.yaml")
    ap.add_argument("--project-url", required=True,
                    help="the project's home (https://HOST/OWNER/wasd): the manifest's homepage and, "
                         "without --uri-template, the download's base")
    ap.add_argument("--uri-template", default=DEFAULT_URI,
                    help="download URL; {project}, {version} and {tarball} are replaced "
                         "(default %(default)s)")
    ap.add_argument("--os", default="linux")
    ap.add_argument("--arch", default="amd64")
    a = ap.parse_args()
    if os.path.basename(a.out) != PLUGIN + ".yaml":
        raise SystemExit("krew_manifest.py: krew wants the manifest named %s.yaml, not %s"
                         % (PLUGIN, os.path.basename(a.out)))
    if a.version.startswith("v"):
        raise SystemExit("krew_manifest.py: --version is X.Y.Z without the v (got %s)" % a.version)
    project = a.project_url.rstrip("/")
    if not project.startswith("https://"):
        raise SystemExit("krew_manifest.py: --project-url must be an https:// URL (got %s)" % a.project_url)
    uri = a.uri_template.replace("{project}", project).replace("{version}", a.version).replace(
        "{tarball}", os.path.basename(a.tarball))
    text = manifest(a.version, uri, sha256(a.tarball), top_directory(a.tarball), a.os, a.arch,
                    project)
    with open(a.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
