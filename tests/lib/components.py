"""The real control plane's binaries (kubectl, helm, kube-apiserver, ...) as
scripts/components.sh builds them into its cache: the bin directory, found
once per process, and the path of one tool in it.

A test that needs a component fails when the components cannot be built;
it never skips, since a skipped test would prove nothing.
"""
import os
import subprocess

from lib.paths import SOURCE_DIR

COMPONENTS = os.path.join(SOURCE_DIR, "scripts", "components.sh")

# The first build of the cache compiles Kubernetes (many minutes); a cached
# run returns in well under a second. The bound only stops a hung build.
_TIMEOUT_S = 3600

_state = {}


class ComponentsError(RuntimeError):
    pass


def bin_dir():
    """The bin directory scripts/components.sh prints (built on first use)."""
    if "bin" not in _state:
        proc = subprocess.run([COMPONENTS], capture_output=True, text=True, timeout=_TIMEOUT_S)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines or not os.path.isdir(lines[-1]):
            raise ComponentsError("scripts/components.sh failed (%d):\n%s\n%s"
                                  % (proc.returncode, proc.stdout, proc.stderr))
        _state["bin"] = lines[-1]
    return _state["bin"]


def tool(name):
    """Path of one component binary, e.g. tool("helm")."""
    path = os.path.join(bin_dir(), name)
    if not os.access(path, os.X_OK):
        raise ComponentsError("%s is not in %s" % (name, bin_dir()))
    return path
