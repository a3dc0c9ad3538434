"""The real control plane's binaries (kubectl, helm, kube-apiserver, ...) as
scripts/components.sh builds them into its cache: the bin directory, found
once per process, and the path of one tool in it; module_tool() the same
for a tool module of tests/tools (`scripts/components.sh krew`).

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


def _built(args):
    proc = subprocess.run([COMPONENTS] + args, capture_output=True, text=True,
                          timeout=_TIMEOUT_S)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines or not os.path.isdir(lines[-1]):
        raise ComponentsError("scripts/components.sh %s failed (%d):\n%s\n%s"
                              % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
    return lines[-1]


def bin_dir():
    """The bin directory scripts/components.sh prints (built on first use)."""
    if "bin" not in _state:
        _state["bin"] = _built([])
    return _state["bin"]


def module_tool(module, name):
    """Path of one binary of the tool module tests/tools/MODULE, e.g.
    module_tool("krew", "kubectl-krew") (built on first use)."""
    key = "module:" + module
    if key not in _state:
        _state[key] = _built([module])
    path = os.path.join(_state[key], name)
    if not os.access(path, os.X_OK):
        raise ComponentsError("%s is not in %s" % (name, _state[key]))
    return path


def tool(name):
    """Path of one component binary, e.g. tool("helm")."""
    path = os.path.join(bin_dir(), name)
    if not os.access(path, os.X_OK):
        raise ComponentsError("%s is not in %s" % (name, bin_dir()))
    return path
