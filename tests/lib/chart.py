"""The Helm chart rendered offline, for the chart, end-to-end and image tests:
build the renderer, render the chart with given values, and small lookups
over the rendered objects.

The renderer (tests/chart/render/main.go) is Go's text/template with the
sprig library, the engine Helm uses; it is built from the Debian Go sources
(GOPATH mode, no network) into a temporary directory once per process.
"""

import atexit
import os
import shutil
import subprocess
import tempfile

import yaml

from lib.paths import SOURCE_DIR, TESTS_DIR

HERE = os.path.join(TESTS_DIR, "chart")  # the renderer's sources and the chart tests' testdata
CHART_DIR = os.path.join(SOURCE_DIR, "charts", "wasd")
TESTDATA = os.path.join(HERE, "testdata")
GO = os.environ.get("WASD_GO", "/usr/lib/go-1.19/bin/go")
GOPATH = os.environ.get("WASD_GOPATH", "/usr/share/gocode")

# A render never takes long; the bound only keeps a hung build or render
# from stalling the test run.
_TIMEOUT_S = 300

_state = {}


def _workdir():
    if "dir" not in _state:
        _state["dir"] = tempfile.mkdtemp(prefix="wasd-chart-")
        atexit.register(shutil.rmtree, _state["dir"], True)
    return _state["dir"]


def renderer():
    """Path of the built renderer binary (built on first use)."""
    if "bin" in _state:
        return _state["bin"]
    work = _workdir()
    out = os.path.join(work, "render")
    env = dict(os.environ)
    env.update({
        "GO111MODULE": "off",
        "GOPATH": GOPATH,
        "GOFLAGS": "",
        "GOCACHE": os.path.join(work, "gocache"),
        "CGO_ENABLED": "0",
    })
    proc = subprocess.run([GO, "build", "-o", out, "."], cwd=os.path.join(HERE, "render"),
                          env=env, capture_output=True, text=True, timeout=_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError("building the renderer failed:\n" + proc.stderr)
    _state["bin"] = out
    return out


class RenderError(Exception):
    pass


def render_text(values_files=(), sets=(), name="wasd", namespace="wasd-system", notes=False,
                chart_dir=CHART_DIR):
    cmd = [renderer(), "--name", name, "--namespace", namespace]
    for f in values_files:
        cmd += ["-f", f]
    for s in sets:
        cmd += ["--set", s]
    if notes:
        cmd.append("--notes")
    cmd.append(chart_dir)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S)
    if proc.returncode != 0:
        raise RenderError(proc.stderr.strip())
    return proc.stdout


def render(values_files=(), sets=(), name="wasd", namespace="wasd-system"):
    """Renders the chart and returns the list of objects (dicts)."""
    text = render_text(values_files, sets, name, namespace)
    return [d for d in yaml.safe_load_all(text) if d is not None]


def write_values(values):
    """Writes a values dict to a temporary YAML file and returns its path."""
    fd, path = tempfile.mkstemp(suffix=".yaml", dir=_workdir())
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(values, f)
    return path


def find(objs, kind, name=None):
    hits = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return hits


def one(objs, kind, name=None):
    hits = find(objs, kind, name)
    if len(hits) != 1:
        raise AssertionError("expected one %s %s, found %d" % (kind, name or "", len(hits)))
    return hits[0]


def load_values():
    with open(os.path.join(CHART_DIR, "values.yaml")) as f:
        return yaml.safe_load(f)


def load_schema():
    import json
    with open(os.path.join(CHART_DIR, "values.schema.json")) as f:
        return json.load(f)


def hook_phases(obj):
    ann = obj["metadata"].get("annotations") or {}
    hook = ann.get("helm.sh/hook")
    return set(hook.split(",")) if hook else set()


def coalesce(user, defaults):
    """User values over chart defaults the way Helm merges them: maps merge
    key by key, anything else replaces, and a null user value removes a key
    the defaults have."""
    out = dict(defaults)
    for key, val in user.items():
        if val is None:
            out.pop(key, None)
        elif isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = coalesce(val, out[key])
        else:
            out[key] = val
    return out


def merged_values(values_files=()):
    """The values the templates see for these -f files (Helm's merge)."""
    values = load_values()
    for path in values_files:
        with open(path) as f:
            values = coalesce(yaml.safe_load(f) or {}, values)
    return values


def min_kube_version():
    """The oldest release Chart.yaml's kubeVersion admits, e.g. "1.30"."""
    import re
    with open(os.path.join(CHART_DIR, "Chart.yaml")) as f:
        text = yaml.safe_load(f)["kubeVersion"]
    m = re.search(r">=\s*v?(\d+)\.(\d+)", text)
    return "%s.%s" % (m.group(1), m.group(2))


CI_DIR = os.path.join(CHART_DIR, "ci")


def ci_values_files():
    """{name: path} of the per-platform values files in charts/wasd/ci."""
    return {f[:-len("-values.yaml")]: os.path.join(CI_DIR, f)
            for f in sorted(os.listdir(CI_DIR)) if f.endswith("-values.yaml")}
