"""Shared pieces of the fault suite: the `wasd webhook` process (certificates from
`wasd certs generate`, ephemeral loopback ports read from its "webhook started"
log line, stopped by PID), raw TLS clients, review requests with unique uids,
/proc readings (RSS, open sockets), the wrk load client, and the knobs that
switch between the short CI runs and the long runs of scripts/faults.sh.

Every wait is bounded; every process started here is stopped by its PID, also
when a test fails. Standard library only (plus wrk for load).
"""
import json
import os
import random
import re
import resource
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import http.client

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BUILD_DIR = os.environ.get("WASD_BUILD_DIR", "")
WASD = os.environ.get("WASD_BIN") or os.path.join(BUILD_DIR or os.path.join(SOURCE_DIR, "build"), "wasd")
TESTDATA = os.path.join(SOURCE_DIR, "tests", "testdata", "e2e")
WRK = os.environ.get("WRK", "/usr/bin/wrk")
LUA_SCRIPT = os.path.join(HERE, "review_post.lua")

WAIT = 20.0  # bound, in seconds, of any single wait for the server in this suite
VALIDATE = "/validate-apps-v1-deployment"
MUTATE_POD = "/mutate-v1-pod"


def Knob(name, default):
    """An integer or float knob from the environment (scripts/faults.sh sets the long values)."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return type(default)(raw)


def Sanitized():
    """True when WASD_BIN is an AddressSanitizer build: RSS then includes ASan's
    quarantine and shadow memory, and everything runs several times slower."""
    cache = os.path.join(BUILD_DIR, "CMakeCache.txt") if BUILD_DIR else ""
    if cache and os.path.exists(cache):
        with open(cache, errors="replace") as f:
            if re.search(r"^WASD_SANITIZE:BOOL=(ON|TRUE|1)$", f.read(), re.M):
                return True
    try:
        with open(WASD, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def Report(line):
    """A figure for the README: printed with a fixed prefix so runs can be grepped."""
    print("FAULT-FIGURE " + line, flush=True)


def RaiseFdLimit(want=8192):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---------------------------------------------------------------- fixtures

def Fixture(name):
    with open(os.path.join(TESTDATA, name), "rb") as f:
        return f.read()


def Review(fixture, uid):
    """The fixture's AdmissionReview with request.uid replaced; compact JSON bytes."""
    review = json.loads(Fixture(fixture))
    review["request"]["uid"] = uid
    return json.dumps(review, separators=(",", ":")).encode()


def RequestBytes(path, body, extra_headers=b"", keep_alive=True):
    head = (b"POST %s HTTP/1.1\r\nHost: wasd-webhook.wasd-system.svc\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n" % (path.encode(), len(body)))
    if not keep_alive:
        head += b"Connection: close\r\n"
    return head + extra_headers + b"\r\n" + body


def CheckAnswer(status, body, uid, allowed=True):
    """None when `body` is the complete, correct answer to review `uid`; else why not."""
    if status != 200:
        return f"status {status}: {body[:200]!r}"
    try:
        review = json.loads(body)
    except ValueError:
        return f"not JSON ({len(body)} bytes)"
    resp = review.get("response") or {}
    if review.get("kind") != "AdmissionReview" or resp.get("uid") != uid:
        return f"wrong review: uid {resp.get('uid')!r}, want {uid!r}"
    if resp.get("allowed") is not allowed:
        return f"allowed={resp.get('allowed')!r}, want {allowed}"
    return None


# ---------------------------------------------------------------- /proc

def RssKiB(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def SocketCount(pid):
    """Open socket descriptors of a process (listeners included)."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass  # closed while we looked
    return n


def WaitFor(fn, timeout=WAIT, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


# ---------------------------------------------------------------- the webhook

_CERTS_LOCK = threading.Lock()


def FreePort():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def GenerateCerts(out_dir):
    """CA + serving certificate for 127.0.0.1 via the product's own command."""
    with _CERTS_LOCK:
        subprocess.run([WASD, "certs", "generate", "--service", "wasd-webhook", "--namespace",
                        "wasd-system", "--out-dir", out_dir, "--extra-san", "127.0.0.1",
                        "--extra-san", "localhost"], check=True, capture_output=True, timeout=60)
    return {k: os.path.join(out_dir, k) for k in ("ca.crt", "tls.crt", "tls.key")}


class Webhook:
    """One `wasd webhook` on ephemeral loopback ports. Logs go to a file (a million
    requests are too many lines for a pipe reader to keep up with); the ports come
    from the "webhook started" line. Started through `sh -c 'ulimit -n …; exec …'`
    so the process (same PID) may hold more descriptors than the connections we open."""

    def __init__(self, directory, flags=(), nofile=8192):
        self.dir = directory
        self.certs = GenerateCerts(os.path.join(directory, "certs"))
        self.log_path = os.path.join(directory, f"webhook-{os.getpid()}-{time.monotonic_ns()}.log")
        # Ports chosen here rather than read from the "webhook started" line: that
        # line is at info level, and the memory runs use --log-level warn.
        self.port, self.probe_port, self.metrics_port = FreePort(), FreePort(), FreePort()
        args = [WASD, "webhook", "--tls-cert-file", self.certs["tls.crt"], "--tls-key-file",
                self.certs["tls.key"], "--bind-address", "127.0.0.1", "--port", str(self.port),
                "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
                "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}", "--shutdown-delay", "0s", *flags]
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["HOME"] = directory
        self.log = open(self.log_path, "wb")
        script = f"ulimit -n {int(nofile)} 2>/dev/null; exec \"$@\""
        self.proc = subprocess.Popen(["/bin/sh", "-c", script, "sh", *args], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, env=env)
        self.pid = self.proc.pid  # `exec` keeps the PID
        try:
            WaitFor(lambda: self.proc.poll() is not None or self.ProbeStatus("/readyz") == 200,
                    what="webhook ready")
            if self.proc.poll() is not None:
                raise AssertionError(f"webhook exited {self.proc.returncode}:\n{self.Text()[-3000:]}")
        except BaseException:
            self.Stop(sig=signal.SIGKILL)
            raise
        self.ctx = ssl.create_default_context(cafile=self.certs["ca.crt"])

    # -- logs

    def Entries(self):
        out = []
        with open(self.log_path, "rb") as f:
            for raw in f:
                try:
                    out.append(json.loads(raw))
                except ValueError:
                    pass
        return out

    def Text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def WaitLog(self, predicate, timeout=WAIT):
        def Seen():
            for e in self.Entries():
                if predicate(e):
                    return e
            if self.proc.poll() is not None:
                raise AssertionError(f"webhook exited {self.proc.returncode}:\n{self.Text()[-3000:]}")
            return None
        return WaitFor(Seen, timeout, 0.05, "a webhook log line")

    # -- probes and process facts

    def ProbeStatus(self, path):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.probe_port, timeout=5)
            try:
                conn.request("GET", path)
                return conn.getresponse().status
            finally:
                conn.close()
        except OSError:
            return 0

    def Metrics(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=5)
        try:
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
        finally:
            conn.close()
        samples = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        return samples

    def Rss(self):
        return RssKiB(self.pid)

    def Sockets(self):
        return SocketCount(self.pid)

    def WaitSockets(self, at_most, timeout=WAIT, what="connections closed"):
        """Waits until the server holds at most `at_most` sockets; returns the count."""
        WaitFor(lambda: self.Sockets() <= at_most, timeout, 0.1, what)
        return self.Sockets()

    # -- clients

    def TlsSocket(self, timeout=WAIT):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            return self.ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        except BaseException:
            raw.close()
            raise

    def Post(self, path, body, timeout=WAIT):
        """One request on a fresh connection; returns (status, headers, body)."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=self.ctx)
        try:
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp, resp.read()
        finally:
            conn.close()

    def CheckReview(self, uid, fixture="deployment-valid.json", path=VALIDATE):
        """A review on a fresh connection; None when answered correctly, else why not."""
        try:
            status, _, body = self.Post(path, Review(fixture, uid))
        except (OSError, http.client.HTTPException) as e:
            return f"{type(e).__name__}: {e}"
        return CheckAnswer(status, body, uid)

    def AssertHealthy(self, tag="healthy"):
        assert self.proc.poll() is None, f"webhook exited {self.proc.returncode}"
        assert self.ProbeStatus("/healthz") == 200, "healthz not 200"
        for i in range(3):
            why = self.CheckReview(f"{tag}-{i}")
            assert why is None, why

    # -- stop

    def Signal(self, sig):
        os.kill(self.pid, sig)

    def Stop(self, sig=signal.SIGTERM, timeout=40):
        if self.proc.poll() is None:
            os.kill(self.pid, sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()
        return self.proc.returncode


def ReadResponse(sock):
    """Parses one HTTP response from a socket; returns (status, headers, body)."""
    resp = http.client.HTTPResponse(sock)
    resp.begin()
    return resp.status, resp, resp.read()


def ReadUntilClosed(sock, timeout=WAIT):
    """Reads until the peer closes; returns (bytes, seconds). Raises past `timeout`."""
    start = time.monotonic()
    data = b""
    while True:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            raise AssertionError(f"connection still open after {timeout:.0f} s")
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (ssl.SSLError, ConnectionError):
            break  # a reset or a TLS alert is a close too
        except socket.timeout:
            continue
        if not chunk:
            break
        data += chunk
    return data, time.monotonic() - start


def ClientHello(ctx=None):
    """The bytes of a real TLS ClientHello (for half-open handshakes)."""
    ctx = ctx or ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


# ---------------------------------------------------------------- wrk

class Wrk:
    """The wrk load client posting one valid review (review_post.lua) over TLS.
    `requests` > 0: every thread stops after its share of answers."""

    def __init__(self, port, connections=16, threads=1, duration="60s", requests=0, uid="wrk-load",
                 path=VALIDATE, fixture="deployment-valid.json"):
        self.body_file = tempfile.NamedTemporaryFile(prefix="wasd-wrk-", suffix=".json", delete=False)
        self.body_file.write(Review(fixture, uid))
        self.body_file.close()
        self.uid = uid
        self.threads = threads
        self.done_file = self.body_file.name + ".done"
        per_thread = (requests + threads - 1) // threads if requests else 0
        cmd = [WRK, f"-t{threads}", f"-c{connections}", f"-d{duration}", "--timeout", "10s",
               "-s", LUA_SCRIPT, f"https://127.0.0.1:{port}{path}", "--",
               self.body_file.name, uid, str(per_thread), self.done_file]
        self.out = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid

    def ThreadsDone(self):
        try:
            with open(self.done_file) as f:
                return len(f.readlines())
        except OSError:
            return 0

    def Wait(self, timeout):
        """Waits for wrk to end (-d elapsed, or every thread at its request count:
        then SIGINT makes wrk print its summary at once); returns a WrkResult."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            if self.ThreadsDone() >= self.threads:
                os.kill(self.pid, signal.SIGINT)
                try:
                    self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
                break
            time.sleep(0.1)
        if self.proc.poll() is None:
            self.Kill()
            raise AssertionError(f"wrk still running after {timeout:.0f} s")
        self.out.seek(0)
        text = self.out.read().decode("utf-8", "replace")
        self.out.close()
        for path in (self.body_file.name, self.done_file):
            try:
                os.unlink(path)
            except OSError:
                pass
        return WrkResult(self.proc.returncode, text)

    def Kill(self):
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            os.kill(self.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


class WrkResult:
    def __init__(self, rc, text):
        self.rc = rc
        self.text = text
        m = re.search(r"wasd-check good=(\d+) bad=(\d+)", text)
        self.good, self.bad = (int(m.group(1)), int(m.group(2))) if m else (0, -1)
        m = re.search(r"(\d+) requests in", text)
        self.requests = int(m.group(1)) if m else 0
        m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
        self.non2xx = int(m.group(1)) if m else 0
        m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
        self.socket_errors = tuple(int(x) for x in m.groups()) if m else (0, 0, 0, 0)

    def __repr__(self):
        return (f"wrk rc={self.rc} requests={self.requests} good={self.good} bad={self.bad} "
                f"non2xx={self.non2xx} socket_errors={self.socket_errors}")


def Rng(seed_name):
    """A seeded generator per test (FAULT_SEED shifts every seed) so runs repeat."""
    return random.Random(f"{seed_name}-{Knob('FAULT_SEED', 6276)}")
