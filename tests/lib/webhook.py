"""Webhook: one `wasd webhook` process on loopback ports, for any test.

The TLS, probe and metrics ports are free loopback ports chosen before the
start. Logs go to a file (a pipe reader cannot keep up with a million lines);
log_entries() reads it incrementally. The process starts without the ambient
Kubernetes configuration (only an explicit kubeconfig counts) and is stopped
by its PID, also when start-up fails. Every wait is bounded.

    with Webhook(generate_certs(d), args=["--io-threads", "2"]) as wh:
        status, resp, body = wh.post("/validate-apps-v1-deployment", review)
"""
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

from lib.net import free_port
from lib import paths
from lib.wait import wait_for

WAIT = 20.0  # bound, in seconds, of one wait for the server
# (The class has a method named `signal`: the defaults below are taken from here.)
SIGTERM, SIGKILL = signal.SIGTERM, signal.SIGKILL


def _proc_status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


class Webhook:
    """certs: {"ca.crt", "tls.crt", "tls.key"} paths (generate_certs or Pki.serving_certs).
    args: extra flags. kubeconfig: passed as --kubeconfig. workdir: for the log and
    $HOME (default: a new temp dir). nofile: raise the descriptor limit of the
    process (`sh -c 'ulimit -n N; exec wasd …'`, same PID). metrics: False gives
    --metrics-bind-address 0 (off). start: False to call start() later."""

    def __init__(self, certs, args=(), kubeconfig=None, workdir=None, nofile=None, metrics=True,
                 start=True, start_timeout=WAIT):
        self.certs = certs
        self.args = list(args)
        self.kubeconfig = kubeconfig
        self.workdir = workdir or tempfile.mkdtemp(prefix="wasd-webhook-")
        self.nofile = nofile
        self.start_timeout = start_timeout
        self.port, self.probe_port = free_port(), free_port()
        self.metrics_port = free_port() if metrics else None
        self.log_path = os.path.join(self.workdir, f"webhook-{os.getpid()}-{time.monotonic_ns()}.log")
        self.proc = None
        self.pid = None
        self._log = None
        self._lock = threading.Lock()
        self._offset = 0
        self._partial = b""
        self._lines = []
        self._entries = []
        if start:
            self.start()

    # ------------------------------------------------------------ lifecycle

    def command(self):
        cmd = [paths.WASD, "webhook", "--tls-cert-file", self.certs["tls.crt"],
               "--tls-key-file", self.certs["tls.key"], "--bind-address", "127.0.0.1",
               "--port", str(self.port), "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
               "--metrics-bind-address",
               f"127.0.0.1:{self.metrics_port}" if self.metrics_port else "0",
               "--shutdown-delay", "0s"]
        # Plain /metrics: the test API server serves no TokenReview or
        # SubjectAccessReview (tests/apiserver/README.md); the HTTPS default is
        # proven on the real one (tests/cluster/test_secure_metrics_real.py).
        if not any(a.startswith("--metrics-secure") for a in self.args):
            cmd.append("--metrics-secure=false")
        if self.kubeconfig:
            cmd += ["--kubeconfig", self.kubeconfig]
        return cmd + self.args

    def start(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["HOME"] = self.workdir
        cmd = self.command()
        if self.nofile:
            cmd = ["/bin/sh", "-c", f"ulimit -n {int(self.nofile)} 2>/dev/null; exec \"$@\"", "sh", *cmd]
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     env=env)
        self.pid = self.proc.pid  # `exec` keeps the PID
        try:
            wait_for(lambda: self.proc.poll() is not None or self.ready(),
                     self.start_timeout, 0.05, "webhook ready")
            if self.proc.poll() is not None:
                raise AssertionError(f"wasd webhook exited {self.proc.returncode}:\n{self.log_text()[-3000:]}")
        except BaseException:
            self.stop(sig=SIGKILL)
            raise
        return self

    def signal(self, sig):
        os.kill(self.pid, sig)

    def wait_exit(self, timeout=WAIT):
        """Waits for the process to end by itself; returns its exit status."""
        return self.proc.wait(timeout=timeout)

    def stop(self, sig=SIGTERM, timeout=40.0):
        """Stops the process by PID (sig, then SIGKILL past `timeout`); returns its status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.kill(self.pid, sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, SIGKILL)
                self.proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.proc.returncode

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------ logs

    def _read_log(self):
        with self._lock:
            with open(self.log_path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
            self._offset += len(data)
            data = self._partial + data
            *complete, self._partial = data.split(b"\n")
            for raw in complete:
                line = raw.decode("utf-8", "replace")
                self._lines.append(line)
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    self._entries.append(entry)
            return list(self._lines), list(self._entries)

    def log_lines(self):
        """Every complete line written so far (stdout and stderr)."""
        return self._read_log()[0]

    def log_entries(self):
        """The lines that are JSON objects (the structured log)."""
        return self._read_log()[1]

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_log(self, predicate, timeout=WAIT):
        """The first log entry for which predicate(entry) holds; fails if the
        process exits or `timeout` passes first."""
        def seen():
            for e in self.log_entries():
                if predicate(e):
                    return e
            if self.proc.poll() is not None:
                for e in self.log_entries():  # lines written just before the exit
                    if predicate(e):
                        return e
                raise AssertionError(f"webhook exited {self.proc.returncode} before the log line; "
                                     f"log:\n{self.log_text()[-3000:]}")
            return None
        return wait_for(seen, timeout, 0.05, "a webhook log line")

    # ------------------------------------------------------------ probes, metrics, /proc

    def ready(self):
        """GET /readyz answers 200."""
        return self.probe_status("/readyz") == 200

    def probe_status(self, path):
        """Status of GET path on the probe port; 0 when nothing answered."""
        try:
            return self.probe_get(path)[0]
        except OSError:
            return 0

    def probe_get(self, path, port=None):
        """(status, text, response) of a plain GET on the probe (or given) port."""
        conn = http.client.HTTPConnection("127.0.0.1", port or self.probe_port, timeout=WAIT)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read().decode(), resp
        finally:
            conn.close()

    def metrics_text(self):
        return self.probe_get("/metrics", port=self.metrics_port)[1]

    def metrics(self):
        """{sample name with labels: value} from /metrics."""
        return metric_samples(self.metrics_text())

    def rss_kib(self):
        return _proc_status_kib(self.pid, "VmRSS")

    def sockets(self):
        """Open socket descriptors of the process (listeners included)."""
        n = 0
        for fd in os.listdir(f"/proc/{self.pid}/fd"):
            try:
                if os.readlink(f"/proc/{self.pid}/fd/{fd}").startswith("socket:"):
                    n += 1
            except OSError:
                pass  # closed while we looked
        return n

    def wait_sockets(self, at_most, timeout=WAIT, what="connections closed"):
        """Waits until the process holds at most `at_most` sockets; returns the count."""
        wait_for(lambda: self.sockets() <= at_most, timeout, 0.1, what)
        return self.sockets()

    # ------------------------------------------------------------ TLS clients

    def context(self):
        """A client TLS context trusting the webhook's CA."""
        return ssl.create_default_context(cafile=self.certs["ca.crt"])

    def connect(self, context=None, timeout=WAIT):
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                           context=context or self.context())

    def tls_socket(self, context=None, timeout=WAIT):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            return (context or self.context()).wrap_socket(raw, server_hostname="127.0.0.1")
        except BaseException:
            raw.close()
            raise

    def post(self, path, body, conn=None, context=None, headers=None, timeout=WAIT):
        """One POST (on `conn`, or a fresh connection closed after); returns
        (status, response, body bytes)."""
        own = conn is None
        conn = conn or self.connect(context, timeout)
        try:
            conn.request("POST", path, body=body, headers=headers or {"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp, resp.read()
        finally:
            if own:
                conn.close()


def metric_samples(text):
    """Prometheus text -> {sample name with labels: float}."""
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples
