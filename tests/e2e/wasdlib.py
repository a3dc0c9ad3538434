"""Shared helpers of the end-to-end tests: the built wasd binary, free
loopback ports, certificates from `wasd certs generate`, and a webhook
process started and stopped by PID."""
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

WASD = os.environ.get("WASD_BIN", "build/wasd")
SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TESTS_DIR = os.path.join(SOURCE_DIR, "tests")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate_certs(out_dir, service="wasd-webhook", namespace="wasd-system", extra=()):
    """CA + serving certificate via the product's own command."""
    cmd = [WASD, "certs", "generate", "--service", service, "--namespace", namespace,
           "--out-dir", out_dir, "--extra-san", "127.0.0.1", "--extra-san", "localhost"]
    for e in extra:
        cmd += ["--extra-san", e]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    return {k: os.path.join(out_dir, k) for k in ("ca.crt", "tls.crt", "tls.key")}


def wait_until(fn, timeout=20.0, interval=0.05, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Webhook:
    """A `wasd webhook` process on loopback ports; use as a context manager."""

    def __init__(self, certs, extra_args=(), kubeconfig=None):
        self.certs = certs
        self.port = free_port()
        self.probe_port = free_port()
        self.metrics_port = free_port()
        self.extra_args = list(extra_args)
        self.kubeconfig = kubeconfig
        self.proc = None
        self.log = tempfile.NamedTemporaryFile(prefix="wasd-webhook-", suffix=".log", delete=False)

    def start(self):
        cmd = [WASD, "webhook", "--tls-cert-file", self.certs["tls.crt"],
               "--tls-key-file", self.certs["tls.key"], "--bind-address", "127.0.0.1",
               "--port", str(self.port),
               "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
               "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}",
               "--shutdown-delay", "0s"] + self.extra_args
        if self.kubeconfig:
            cmd += ["--kubeconfig", self.kubeconfig]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(lambda: self.ready() or self.proc.poll() is not None, 20, what="webhook ready")
        if self.proc.poll() is not None:
            raise RuntimeError(f"wasd webhook exited {self.proc.returncode}: {self.read_log()}")
        return self

    def ready(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.probe_port}/readyz", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def read_log(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=35)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        return self.proc.returncode if self.proc else None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
