"""Reconciler: one `wasd reconciler` process on loopback ports, stopped by PID."""
import os
import signal
import subprocess

from lib.net import free_port, http_get
from lib import paths
from lib.process import stop_process
from lib.wait import wait_for


class Reconciler:
    """`wasd reconciler --kubeconfig K` with free probe and metrics ports; its log
    is workdir/<name>.log. Not started until start() (or Env.start_reconciler).
    kubeconfig None: no --kubeconfig flag. env: the process environment (default:
    this one's)."""

    def __init__(self, kubeconfig, workdir, name="reconciler", args=(), env=None):
        # The tests read the Normal Events (WorkloadCreated, ...): on unless the
        # caller says otherwise (the binary's default is off).
        args = list(args)
        if not any(a.startswith("--normal-events") for a in args):
            args = ["--normal-events=true"] + args
        self.name = name
        self.kubeconfig = kubeconfig
        self.probe_port = free_port()
        self.metrics_port = free_port()
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.args = list(args)
        self.env = env
        self.proc = None
        self._log = None

    def start(self):
        self._log = open(self.log_path, "ab")
        cmd = [paths.WASD, "reconciler"]
        if self.kubeconfig is not None:
            cmd += ["--kubeconfig", self.kubeconfig]
        cmd += ["--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
                "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}"] + self.args
        # Plain /metrics: the test API server serves no TokenReview or
        # SubjectAccessReview; the HTTPS default is proven on the real one
        # (tests/cluster/test_secure_metrics_real.py).
        if not any(a.startswith("--metrics-secure") for a in self.args):
            cmd.append("--metrics-secure=false")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     env=self.env)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def ready(self):
        return http_get(f"http://127.0.0.1:{self.probe_port}/readyz")[0] == 200

    def wait_ready(self, timeout=30):
        wait_for(lambda: self.ready() or self.proc.poll() is not None, timeout, 0.1, f"{self.name} ready")
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited {self.proc.returncode}:\n{self.logs()[-3000:]}")
        return self

    def metrics_text(self):
        return http_get(f"http://127.0.0.1:{self.metrics_port}/metrics")[1]

    def metric(self, name):
        """The sum of every sample of metric `name` (all label sets)."""
        total = 0.0
        for line in self.metrics_text().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def logs(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=15.0):
        rc = stop_process(self.proc, timeout=timeout, sig=sig)
        if self._log is not None:
            self._log.close()
            self._log = None
        return rc

    def kill(self):
        return self.stop(signal.SIGKILL)
