"""The Helm chart rendered by the real helm (v4.3.2, built by
scripts/components.sh), for the chart, end-to-end and image tests: render
the chart with given values (`helm template`), lint it (`helm lint
--strict`), its NOTES (`helm install --dry-run=client`), and small lookups
over the rendered objects.

helm gets its own HELM_CACHE_HOME, HELM_CONFIG_HOME and HELM_DATA_HOME in a
temporary directory per process, so no user's helm state is read or
written. values.schema.json is enforced by helm itself: bad values fail
with helm's own message (RenderError).
"""

import atexit
import os
import shutil
import subprocess
import tempfile

import yaml

from lib import components
from lib.paths import SOURCE_DIR, TESTS_DIR

HERE = os.path.join(TESTS_DIR, "chart")  # the chart tests' testdata
CHART_DIR = os.path.join(SOURCE_DIR, "charts", "wasd")
TESTDATA = os.path.join(HERE, "testdata")

# A render never takes long; the bound only keeps a hung helm from stalling
# the test run.
_TIMEOUT_S = 300

_state = {}


def _workdir():
    if "dir" not in _state:
        _state["dir"] = tempfile.mkdtemp(prefix="wasd-chart-")
        atexit.register(shutil.rmtree, _state["dir"], True)
    return _state["dir"]


def helm_env():
    """The environment helm runs in: private HELM_* homes, no kubeconfig."""
    work = _workdir()
    env = dict(os.environ)
    for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[var] = os.path.join(work, var.lower())
        os.makedirs(env[var], exist_ok=True)
    env["KUBECONFIG"] = os.path.join(work, "no-kubeconfig")
    return env


class RenderError(Exception):
    pass


def helm(*args):
    """Runs the real helm; returns stdout, raises RenderError with helm's
    stderr when it fails."""
    proc = subprocess.run([components.tool("helm"), *args], capture_output=True, text=True,
                          env=helm_env(), timeout=_TIMEOUT_S)
    if proc.returncode != 0:
        raise RenderError((proc.stderr.strip() or proc.stdout.strip()))
    return proc.stdout


# The image name every test install and render uses: the chart has no default
# (an unset image.repository fails the render). The same name as
# scripts/cluster.sh's WASD_IMAGE default, which tells the node agent that
# containers of this image run the wasd binary.
TEST_IMAGE_REPOSITORY = "wasd.test/wasd"


def _test_image_values():
    """A values file naming TEST_IMAGE_REPOSITORY, given before the caller's
    own -f files and --set values so that either overrides it (an empty
    `image.repository=` in sets renders the chart as a user who set nothing)."""
    if "image_values" not in _state:
        path = os.path.join(_workdir(), "test-image-values.yaml")
        with open(path, "w") as f:
            yaml.safe_dump({"image": {"repository": TEST_IMAGE_REPOSITORY}}, f)
        _state["image_values"] = path
    return _state["image_values"]


def _value_args(values_files, sets):
    args = ["-f", _test_image_values()]
    for f in values_files:
        args += ["-f", f]
    for s in sets:
        args += ["--set", s]
    return args


def render_text(values_files=(), sets=(), name="wasd", namespace="wasd-system", notes=False,
                chart_dir=CHART_DIR):
    """The rendered manifests (`helm template`), or with notes=True the
    release's NOTES (`helm install --dry-run=client`)."""
    if notes:
        out = helm("install", name, chart_dir, "--namespace", namespace, "--dry-run=client",
                   "-o", "json", *_value_args(values_files, sets))
        import json
        return json.loads(out).get("info", {}).get("notes", "")
    return helm("template", name, chart_dir, "--namespace", namespace,
                *_value_args(values_files, sets))


def render(values_files=(), sets=(), name="wasd", namespace="wasd-system"):
    """Renders the chart and returns the list of objects (dicts)."""
    text = render_text(values_files, sets, name, namespace)
    return [d for d in yaml.safe_load_all(text) if d is not None]


def lint(values_files=(), sets=(), chart_dir=CHART_DIR):
    """`helm lint --strict`; returns its output, raises RenderError."""
    return helm("lint", "--strict", chart_dir, *_value_args(values_files, sets))


def write_values(values):
    """Writes a values dict to a temporary YAML file and returns its path."""
    fd, path = tempfile.mkstemp(suffix=".yaml", dir=_workdir())
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(values, f)
    return path


def pod_specs(objs):
    """(object, pod spec) of every object that runs pods: Deployments and
    Jobs (their template's spec) and bare Pods."""
    for o in objs:
        if o["kind"] in ("Deployment", "Job"):
            yield o, o["spec"]["template"]["spec"]
        elif o["kind"] == "Pod":
            yield o, o["spec"]


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


FULL_VALUES = os.path.join(TESTDATA, "values-full.yaml")

# The renders the chart tests check (tests/chart/test_chart.py) and the real
# API server is given (tests/cluster/test_chart_real_tools.py): name ->
# keyword arguments of render().
SCENARIOS = {
    "default": dict(),
    "certmanager": dict(sets=["certs.mode=certManager"]),
    "full": dict(values_files=[FULL_VALUES]),
    "full-selfmanaged": dict(values_files=[FULL_VALUES], sets=["certs.mode=selfManaged"]),
    "no-cleanup": dict(sets=["hooks.cleanupOnDelete=false", "webhook.podDisruptionBudget.enabled=false",
                             "webhook.antiAffinity=none"]),
    "external-sa": dict(sets=["webhook.serviceAccount.create=false", "webhook.serviceAccount.name=ext-wh",
                              "reconciler.serviceAccount.create=false",
                              "reconciler.serviceAccount.name=ext-rc"]),
    "other-ns": dict(namespace="platform"),
    # 53 characters, the longest release name helm admits.
    "long-name": dict(name="a-very-long-release-name-that-goes-on-and-on-for-a-wh"),
}


def ci_values_files():
    """{name: path} of the per-platform values files in charts/wasd/ci."""
    return {f[:-len("-values.yaml")]: os.path.join(CI_DIR, f)
            for f in sorted(os.listdir(CI_DIR)) if f.endswith("-values.yaml")}
