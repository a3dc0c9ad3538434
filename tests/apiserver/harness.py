"""Start/stop the test API server from Python tests, talk to it, read its audit log.

    from apiserver.harness import ApiServer   # tests/ is on PYTHONPATH


    with ApiServer() as srv:                 # temp dir, random port, stopped by PID
        srv.kubectl("apply", "-f", "deploy.yaml")
        code, _, obj = srv.request("GET", "/apis/apps/v1/namespaces/default/deployments/web")
        writes = srv.audit(user="admin", methods=("POST", "PUT", "PATCH", "DELETE"))

An ApiServer object is used from one test thread at a time.
"""
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from lib.wait import wait_for

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KUBECTL = os.environ.get("KUBECTL", "/usr/bin/kubectl")
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


class ApiServer:
    def __init__(self, dir=None, args=(), start_timeout=30.0, keep_dir=False):
        """dir: state dir (default: a fresh temp dir, removed on stop unless keep_dir).
        args: extra command-line flags, e.g. ["--controllers", "gc,namespace"]."""
        self.own_dir = dir is None
        self.dir = dir or tempfile.mkdtemp(prefix="wasd-apiserver-")
        self.args = list(args)
        self.start_timeout = start_timeout
        self.keep_dir = keep_dir or bool(os.environ.get("WASD_KEEP_TEST_DIRS"))
        self.proc = None
        self.info = {}

    # ------------------------------------------------------------ lifecycle

    def Start(self):
        ready = os.path.join(self.dir, "ready")
        if os.path.exists(ready):
            os.unlink(ready)
        env = dict(os.environ, PYTHONPATH=TESTS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PYTHONDONTWRITEBYTECODE="1")
        self.stdout = open(os.path.join(self.dir, "stdout.log"), "ab")
        # --exit-with-parent: a test that dies without stopping it does not leave it behind.
        self.proc = subprocess.Popen([sys.executable, "-m", "apiserver", "--dir", self.dir,
                                      "--exit-with-parent"] + self.args,
                                     cwd=TESTS_DIR, env=env, stdout=self.stdout, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: os.path.exists(ready) or self.proc.poll() is not None,
                    self.start_timeout, 0.05, "apiserver ready file")
            if self.proc.poll() is not None:
                raise RuntimeError(f"apiserver exited with {self.proc.returncode}; see {self.dir}/stdout.log")
            with open(ready) as f:
                self.info = json.load(f)
        except BaseException:
            self.Stop()
            raise
        return self

    def Stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if getattr(self, "stdout", None):
            self.stdout.close()
            self.stdout = None
        if self.own_dir and not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.Start()

    def __exit__(self, *exc):
        self.Stop()

    # ------------------------------------------------------------ facts

    @property
    def pid(self):
        return self.proc.pid

    @property
    def url(self):
        return self.info["url"]

    @property
    def port(self):
        return self.info["port"]

    @property
    def kubeconfig(self):
        """kubeconfig with the admin bearer token (system:masters)."""
        return self.info["kubeconfig"]

    @property
    def kubeconfig_cert(self):
        """kubeconfig with the admin client certificate instead of a token."""
        return self.info["kubeconfig_cert"]

    @property
    def ca(self):
        return self.info["ca"]

    @property
    def token(self):
        return self.info["token"]

    @property
    def audit_path(self):
        return self.info["audit"]

    @property
    def log_path(self):
        return self.info["log"]

    def AddUser(self, username, groups=(), token=None):
        """Register a bearer token for username; returns (token, kubeconfig path)."""
        token = token or f"{username.replace(':', '-')}-{os.urandom(8).hex()}"
        with open(os.path.join(self.dir, "tokens.csv"), "a") as f:
            f.write(f'{token},{username},{username}-uid,"{",".join(groups)}"\n')
        with open(self.kubeconfig) as f:
            cfg = json.load(f)
        cfg["users"][0]["user"] = {"token": token}
        path = os.path.join(self.dir, f"kubeconfig-{username.replace(':', '-')}")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return token, path

    # ------------------------------------------------------------ clients

    def Kubectl(self, *args, input=None, check=True, timeout=60, kubeconfig=None):
        """Run kubectl against the server; returns CompletedProcess (text)."""
        env = dict(os.environ, KUBECONFIG=kubeconfig or self.kubeconfig, HOME=self.dir)
        p = subprocess.run([KUBECTL] + list(args), input=input, capture_output=True, text=True,
                           timeout=timeout, env=env)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def Request(self, method, path, body=None, content_type="application/json", headers=None,
                timeout=30, token=None):
        """One HTTPS request; returns (status, headers, decoded JSON or text)."""
        ctx = ssl.create_default_context(cafile=self.ca)
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else (
                body.encode() if isinstance(body, str) else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token or self.token}")
        if data is not None:
            req.add_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
                status, hdrs, raw = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, raw = e.code, e.headers, e.read()
        try:
            return status, hdrs, json.loads(raw)
        except ValueError:
            return status, hdrs, raw.decode(errors="replace")

    def Get(self, path):
        status, _, obj = self.Request("GET", path)
        return obj if status == 200 else None

    def Watch(self, path, timeout=10):
        """Open a watch (path must include watch=1); returns a urllib response whose
        lines are JSON events. The caller closes it."""
        ctx = ssl.create_default_context(cafile=self.ca)
        req = urllib.request.Request(self.url + path)
        req.add_header("Authorization", f"Bearer {self.token}")
        return urllib.request.urlopen(req, context=ctx, timeout=timeout)

    # ------------------------------------------------------------ audit and knobs

    def Audit(self, since=0, user=None, methods=None, path=None, source=None):
        """Audit records from the JSON-lines file, filtered. Each has seq, time, method,
        path, query, user, status, source ("http" or "controller"), body (writes),
        warnings and webhooks (names called), watch."""
        out = []
        with open(self.audit_path) as f:
            for line in f:
                e = json.loads(line)
                if e["seq"] <= since:
                    continue
                if user is not None and e.get("user") != user:
                    continue
                if methods is not None and e.get("method") not in methods:
                    continue
                if path is not None and path not in e.get("path", ""):
                    continue
                if source is not None and e.get("source") != source:
                    continue
                out.append(e)
        return out

    def LastSeq(self):
        """The newest audit record's seq, once every request that started before this
        call has its record: the server writes a record after sending the answer, so a
        client holding its answer may otherwise be ahead of the audit."""
        started = time.time()
        for _ in range(100):  # at most ~5 s: a request still being served that long is not ours
            if not any(not e.get("watch") and e["since"] <= started for e in self.InFlight()):
                break
            time.sleep(0.05)
        entries = self.Audit()
        return entries[-1]["seq"] if entries else 0

    def SetFaults(self, rules, append=False):
        return self.Request("POST" if append else "PUT", "/debug/faults", rules)[2]

    def ClearFaults(self):
        return self.Request("DELETE", "/debug/faults")[2]

    def Compact(self):
        return self.Request("POST", "/debug/compact", {})[2]

    def InFlight(self, path=None):
        """The requests being served now (method, path, query, user, watch, since);
        those whose path contains `path` if given."""
        items = self.Request("GET", "/debug/inflight")[2]["items"]
        return [e for e in items if path is None or path in e["path"]]

    def DropWatches(self):
        """Cut every open watch (no final chunk), as a lost connection."""
        return self.Request("POST", "/debug/drop-watches", {})[2]

    def Bookmark(self):
        """One BOOKMARK now on every open watch that allows bookmarks."""
        return self.Request("POST", "/debug/bookmark", {})[2]

    def HoldWatches(self, on):
        """While on, new watches get their 200 but no event until released (at most 30 s)."""
        return self.Request("PUT", "/debug/hold-watches", {"on": bool(on)})[2]

    def SetServiceEndpoint(self, namespace, name, host, port):
        """Route webhook clientConfig.service namespace/name to host:port (TLS name stays
        <name>.<namespace>.svc, as kube-apiserver verifies it)."""
        return self.Request("POST", "/debug/service-endpoints", {f"{namespace}/{name}": f"{host}:{port}"})[2]

    def SetControllers(self, enabled):
        return self.Request("PUT", "/debug/controllers", {"enabled": list(enabled)})[2]

    def SetDisabledGroups(self, groups):
        """API groups not to serve from now on (as CRDs not installed); [] serves all."""
        return self.Request("PUT", "/debug/groups", {"disabled": list(groups)})[2]

    def SetGenericWorkload(self, enabled):
        """Turn kube-apiserver's GenericWorkload gate on or off from now on: off drops
        spec.schedulingGroup from new pods and serves no Workload API; on keeps the field
        (serve the API again with SetSchedulingVersions)."""
        status, _, out = self.Request("PUT", "/debug/generic-workload", {"enabled": bool(enabled)})
        if status != 200:
            raise AssertionError(f"SetGenericWorkload({enabled!r}): {status} {out}")
        return out

    def SetSchedulingVersions(self, versions):
        """Serve scheduling.k8s.io Workloads/PodGroups in these versions from now on (a list
        from "v1", "v1beta1"), as an upgrade of kube-apiserver would: discovery changes at
        once, every open watch on a scheduling.k8s.io resource is cut, the objects stay.
        Returns the served list; raises AssertionError on a refused list."""
        status, _, out = self.Request("PUT", "/debug/scheduling-versions", {"versions": list(versions)})
        if status != 200:
            raise AssertionError(f"SetSchedulingVersions({versions!r}): {status} {out}")
        return out["versions"]
