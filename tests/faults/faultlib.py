"""Shared pieces of the fault suite: the suite's `wasd webhook` (lib.webhook with
certificates from `wasd certs generate` and a raised descriptor limit), review
requests with unique uids and their checks, raw TLS reading, the wrk load client,
and the knobs that switch between the short CI runs and the long runs of
scripts/faults.sh.

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
import time
import http.client

from lib import paths
from lib.certs import generate_certs
from lib.webhook import Webhook

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.environ.get("WASD_BUILD_DIR", "")
TESTDATA = paths.testdata("e2e")
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
        with open(paths.WASD, "rb") as f:
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


# ---------------------------------------------------------------- the webhook

def StartWebhook(directory, flags=(), nofile=8192):
    """One `wasd webhook` for a fault test: certificates in directory/certs, its log in
    directory, up to `nofile` descriptors (more than the connections the test opens)."""
    certs = generate_certs(os.path.join(directory, "certs"))
    return Webhook(certs, args=flags, workdir=directory, nofile=nofile)


def CheckReview(webhook, uid, fixture="deployment-valid.json", path=VALIDATE):
    """A review on a fresh connection; None when answered correctly, else why not."""
    try:
        status, _, body = webhook.post(path, Review(fixture, uid))
    except (OSError, http.client.HTTPException) as e:
        return f"{type(e).__name__}: {e}"
    return CheckAnswer(status, body, uid)


def AssertHealthy(webhook, tag="healthy"):
    assert webhook.running(), f"webhook exited {webhook.proc.returncode}"
    assert webhook.probe_status("/healthz") == 200, "healthz not 200"
    for i in range(3):
        why = CheckReview(webhook, f"{tag}-{i}")
        assert why is None, why


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
