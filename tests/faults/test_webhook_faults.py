"""Fault suite, webhook part: the real `wasd webhook` on loopback under hostile and
unlucky clients — 1,000 concurrent TLS connections, slow readers, slow writers,
half-open TLS handshakes, bodies at and one byte past the limit, header floods,
garbage on the TLS port, the wrk load client stopped and continued — each while
other clients keep being served, and with the server's connection count back to
its baseline afterwards (no leaked connection). SIGTERM under load lives in
test_webhook_shutdown.py, the memory run in test_webhook_memory.py.

Knobs (environment; scripts/faults.sh sets larger values): FAULT_CONNECTIONS
(1000), FAULT_HALF_OPEN (200), FAULT_SLOW_CLIENTS (20), FAULT_GARBAGE (60).
Every wait is bounded; the server is stopped by its PID.
"""
import concurrent.futures
import os
import select
import shutil
import signal
import socket
import ssl
import tempfile
import threading
import time
import unittest

from faultlib import (MUTATE_POD, VALIDATE, WAIT, AssertHealthy, CheckAnswer, CheckReview, ClientHello,
                      Knob, RaiseFdLimit, ReadResponse, ReadUntilClosed, Report, RequestBytes, Review, Rng,
                      Sanitized, StartWebhook, Wrk)
from lib.wait import wait_for

LIMIT = 64 * 1024  # --max-request-bytes of the limits server: small, so the tests stay quick
SHORT = "2s"       # read, write and handshake deadlines of the timeouts server


class WebhookCase(unittest.TestCase):
    flags = ()

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-faults-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.server = StartWebhook(cls.tmp, ("--io-threads", "2", *cls.flags))
        cls.addClassCleanup(cls.server.stop)

    def setUp(self):
        # Connections of earlier tests are gone before a test measures its own.
        self.base = self.server.wait_sockets(3, what="only the three listeners open")

    def tearDown(self):
        AssertHealthy(self.server, self.id().rsplit(".", 1)[-1])

    def ServeWhile(self, busy, tag, at_least=5, pause=0.1):
        """Reviews on fresh connections while busy() is true (at least `at_least`);
        every one must be answered correctly. Returns how many were served."""
        served = 0
        deadline = time.monotonic() + 3 * WAIT
        while (busy() or served < at_least) and time.monotonic() < deadline:
            why = CheckReview(self.server, f"{tag}-{served}")
            self.assertIsNone(why, f"review {served} while {tag}")
            served += 1
            time.sleep(pause)
        return served


class ConcurrentConnectionsTest(WebhookCase):
    """FAULT_CONNECTIONS TLS connections open at once, one review in flight on each.
    Default deadlines: opening a thousand handshakes takes longer than a short read
    deadline would allow the first ones to wait."""

    def test_thousand_concurrent_connections(self):
        # Three bursts. glibc keeps freed memory in its arenas, so RSS after a burst
        # stays near its high-water mark and the next bursts add less and less
        # (measured: +81, +18, +7, +3, +3, +0.4 MiB over six bursts); a leak of the
        # per-connection state would add the same ~80 MiB every time.
        rss = [self.server.rss_kib()]
        for burst in range(3):
            self.Burst(burst)
            rss.append(self.server.rss_kib())
        Report(f"webhook concurrent-connections RSS after each burst closed: "
               f"{' -> '.join(str(r) for r in rss)} KiB")
        if not Sanitized():  # ASan's quarantine holds freed memory; its LeakSanitizer checks at exit
            self.assertLess(rss[3] - rss[2], 32 * 1024, "RSS grew by more than 32 MiB in the third burst")

    def Burst(self, burst):
        n = Knob("FAULT_CONNECTIONS", 1000)
        RaiseFdLimit(n + 1024)
        rss_before = self.server.rss_kib()
        socks = [None] * n

        def Open(i):
            socks[i] = self.server.tls_socket()

        try:
            with concurrent.futures.ThreadPoolExecutor(32) as pool:
                for f in [pool.submit(Open, i) for i in range(n)]:
                    f.result(timeout=4 * WAIT)
            peak = self.server.sockets()
            self.assertGreaterEqual(peak, self.base + n, "the server holds every connection at once")
            # Every connection gets its request before any answer is read.
            for i, s in enumerate(socks):
                s.sendall(RequestBytes(VALIDATE, Review("deployment-valid.json", f"conn-{burst}-{i}")))
            failures = []
            for i, s in enumerate(socks):
                try:
                    status, _, body = ReadResponse(s)
                    why = CheckAnswer(status, body, f"conn-{burst}-{i}")
                except (OSError, ValueError) as e:
                    why = f"{type(e).__name__}: {e}"
                if why:
                    failures.append((i, why))
            rss_peak = self.server.rss_kib()
            AssertHealthy(self.server, f"during-burst-{burst}")
        finally:
            for s in socks:
                if s is not None:
                    s.close()
        self.assertEqual(failures[:5], [], f"{len(failures)} of {n} connections failed")
        after = self.server.wait_sockets(self.base, what="all client connections closed")
        Report(f"webhook concurrent-connections (burst {burst + 1}): {n} open at once (server sockets {peak}), "
               f"{n - len(failures)} answered correctly, {len(failures)} failed; sockets after {after}; "
               f"RSS {rss_before} KiB before, {rss_peak} KiB with all open, {self.server.rss_kib()} KiB "
               f"after they closed")


class TimeoutsTest(WebhookCase):
    """Slow readers, slow writers, half-open handshakes and a stopped load client
    against short deadlines."""

    flags = ("--read-timeout", SHORT, "--write-timeout", SHORT, "--tls-handshake-timeout", SHORT,
             "--idle-timeout", "10s")

    def test_slow_reader_is_dropped_at_write_deadline(self):
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
        raw.settimeout(WAIT)
        raw.connect(("127.0.0.1", self.server.port))
        s = self.server.context().wrap_socket(raw, server_hostname="127.0.0.1")
        self.addCleanup(s.close)
        request = RequestBytes(MUTATE_POD, Review("pod-managed.json", "slow-reader"))
        # Pipeline requests and never read: the answers fill our window and the
        # server's send buffer, its write blocks, then it stops reading our requests
        # and our send blocks too.
        s.settimeout(1.0)
        sent, stalled, dropped = 0, False, False
        deadline = time.monotonic() + 3 * WAIT
        while time.monotonic() < deadline:
            try:
                s.sendall(request)
                sent += 1
            except socket.timeout:
                stalled = True
                break
            except (ssl.SSLError, OSError):
                dropped = True
                break
        self.assertTrue(stalled or dropped, f"{sent} pipelined requests never filled the buffers")
        stalled_at = time.monotonic()
        served = self.ServeWhile(lambda: False, "beside-slow-reader", at_least=10, pause=0)
        self.server.wait_sockets(self.base, what="the slow reader dropped")
        closed_after = time.monotonic() - stalled_at
        # What reached us is whole answers, then the close: fewer than we asked for.
        s.settimeout(WAIT)
        answers = 0
        try:
            while True:
                status, _, body = ReadResponse(s)
                self.assertIsNone(CheckAnswer(status, body, "slow-reader"))
                answers += 1
        except (OSError, ValueError, ssl.SSLError, Exception) as e:  # noqa: B014 – any end of stream
            end = type(e).__name__
        self.assertLess(answers, sent)
        Report(f"webhook slow-reader: {sent} pipelined requests, never read; dropped "
               f"{closed_after:.1f} s after our send had been blocked for 1 s (--write-timeout {SHORT}); {answers} "
               f"answers buffered before the close ({end}); {served} other reviews served meanwhile")

    def test_slow_writers_are_dropped_at_read_deadline(self):
        n = Knob("FAULT_SLOW_CLIENTS", 20)
        body = Review("deployment-valid.json", "slow-writer")
        request = RequestBytes(VALIDATE, body)
        header_len = len(request) - len(body)
        results = [None] * n
        done = threading.Event()

        def Trickle(i):
            # Even clients trickle the body (headers sent whole), odd ones the headers.
            start = time.monotonic()
            sent = 0
            try:
                s = self.server.tls_socket()
                try:
                    if i % 2 == 0:
                        s.sendall(request[:header_len])
                        sent = header_len
                    while sent < len(request) and time.monotonic() - start < 3 * WAIT:
                        s.sendall(request[sent:sent + 1])
                        sent += 1
                        readable, _, _ = select.select([s], [], [], 1.0)  # one byte a second
                        if readable or s.pending():
                            data = s.recv(65536)
                            results[i] = ("closed", time.monotonic() - start, sent, data)
                            return
                    results[i] = ("open", time.monotonic() - start, sent, b"")
                finally:
                    s.close()
            except (OSError, ssl.SSLError) as e:
                results[i] = ("closed", time.monotonic() - start, sent, type(e).__name__.encode())

        threads = [threading.Thread(target=Trickle, args=(i,), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        wait_for(lambda: self.server.sockets() >= self.base + n, what="the slow writers connected")
        served = self.ServeWhile(lambda: any(t.is_alive() for t in threads), "beside-slow-writers")
        for t in threads:
            t.join(WAIT)
        self.assertTrue(all(r and r[0] == "closed" for r in results), results)
        self.assertTrue(all(r[2] < len(request) for r in results), "no slow request completed")
        self.assertTrue(all(not r[3].startswith(b"HTTP/1.1 200") for r in results))
        waits = sorted(r[1] for r in results)
        self.server.wait_sockets(self.base, what="slow writers gone")
        Report(f"webhook slow-writers: {n} clients at 1 byte/s ({n // 2 + n % 2} in the body, {n // 2} in "
               f"the headers): all dropped after {waits[0]:.1f}..{waits[-1]:.1f} s (--read-timeout "
               f"{SHORT}), none answered; {served} other reviews served meanwhile")

    def test_half_open_handshake_flood(self):
        n = Knob("FAULT_HALF_OPEN", 200)
        RaiseFdLimit(n + 1024)
        hello = ClientHello(self.server.context())
        rng = Rng("half-open")
        kinds = {"no bytes": 0, "partial ClientHello": 0, "ClientHello, then silence": 0}
        socks = []
        try:
            for i in range(n):
                s = socket.create_connection(("127.0.0.1", self.server.port), timeout=WAIT)
                socks.append(s)
                kind = ("no bytes", "partial ClientHello", "ClientHello, then silence")[i % 3]
                kinds[kind] += 1
                if kind == "partial ClientHello":
                    s.sendall(hello[:rng.randrange(1, len(hello))])
                elif kind == "ClientHello, then silence":
                    s.sendall(hello)
            wait_for(lambda: self.server.sockets() >= self.base + n, what="the flood accepted")
            opened_at = time.monotonic()
            served = self.ServeWhile(lambda: False, "beside-half-open", at_least=5)
            waits = []
            for s in socks:
                data, _ = ReadUntilClosed(s, timeout=WAIT)
                self.assertFalse(data.startswith(b"HTTP/"), data[:40])
                waits.append(time.monotonic() - opened_at)
        finally:
            for s in socks:
                s.close()
        after = self.server.wait_sockets(self.base, what="half-open connections gone")
        Report(f"webhook half-open-tls: {n} connections ({', '.join(f'{v} {k}' for k, v in kinds.items())}) "
               f"all dropped within {max(waits):.1f} s of the flood (--tls-handshake-timeout {SHORT}); "
               f"{served} reviews served during the flood; sockets after {after}")

    def test_stopped_and_continued_load_client(self):
        load = Wrk(self.server.port, connections=16, duration="8s", uid="wrk-stop")
        try:
            wait_for(lambda: self.server.sockets() >= self.base + 16, what="wrk connected")
            time.sleep(1.0)
            os.kill(load.pid, signal.SIGSTOP)
            stopped = time.monotonic()
            served = self.ServeWhile(lambda: time.monotonic() - stopped < 3.0, "beside-stopped-wrk")
            held = self.server.sockets()
            os.kill(load.pid, signal.SIGCONT)
            result = load.Wait(4 * WAIT)
        finally:
            load.Kill()
        self.assertEqual(result.rc, 0, result.text)
        self.assertGreater(result.good, 0, result.text)
        self.assertEqual((result.bad, result.non2xx), (0, 0), result.text)
        after = self.server.wait_sockets(self.base, what="wrk's connections closed")
        Report(f"webhook stop-cont: wrk (16 connections) stopped 3 s mid-run: {served} other reviews "
               f"served meanwhile, wrk's connections held ({held} server sockets); after -CONT: "
               f"{result.good} correct answers, {result.bad} wrong, {result.non2xx} non-2xx, "
               f"socket errors {result.socket_errors}; server sockets after {after} (baseline {self.base})")


class LimitsTest(WebhookCase):
    """Bodies at and past --max-request-bytes, header floods, garbage on the TLS port."""

    flags = ("--max-request-bytes", str(LIMIT), "--read-timeout", "5s", "--tls-handshake-timeout", "5s")

    def Exchange(self, raw_request, keep_open=False):
        """Sends raw bytes on a new TLS connection; returns (status, headers, body) or
        ("closed", why) when the server closed without an answer."""
        s = self.server.tls_socket()
        try:
            try:
                s.sendall(raw_request)
            except (OSError, ssl.SSLError):
                pass  # the server may refuse mid-send; its answer (if any) is still readable
            try:
                return ReadResponse(s)
            except (OSError, ValueError, ssl.SSLError, Exception) as e:  # noqa: B014
                return ("closed", type(e).__name__)
        finally:
            s.close()

    def Padded(self, uid, size):
        body = Review("deployment-valid.json", uid)
        self.assertLessEqual(len(body), size)
        return body + b" " * (size - len(body))  # trailing whitespace keeps it valid JSON

    def test_bodies_at_and_past_the_limit(self):
        checks = 0
        # Exactly at the limit: read in full and judged.
        status, _, body = self.Exchange(RequestBytes(VALIDATE, self.Padded("at-limit", LIMIT)))
        self.assertIsNone(CheckAnswer(status, body, "at-limit"))
        status, _, body = self.Exchange(RequestBytes(VALIDATE, b"x" * LIMIT))
        self.assertEqual(status, 400, body)
        checks += 2
        # One byte past: 413 and the connection closed.
        status, resp, body = self.Exchange(RequestBytes(VALIDATE, self.Padded("past-limit", LIMIT + 1)))
        self.assertEqual(status, 413, body)
        self.assertEqual(resp.getheader("Connection"), "close")
        self.assertIn(str(LIMIT).encode(), body)
        checks += 1
        # A Content-Length far past the limit is refused before any body is read.
        head = (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 10737418240\r\n\r\n" % VALIDATE.encode())
        status, _, body = self.Exchange(head + b"{")
        self.assertEqual(status, 413, body)
        checks += 1
        # Chunked bodies count the same way.
        def Chunked(payload, piece=4096):
            out = b"POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" % VALIDATE.encode()
            for i in range(0, len(payload), piece):
                part = payload[i:i + piece]
                out += b"%x\r\n%s\r\n" % (len(part), part)
            return out + b"0\r\n\r\n"
        status, _, body = self.Exchange(Chunked(self.Padded("chunked-at-limit", LIMIT)))
        self.assertIsNone(CheckAnswer(status, body, "chunked-at-limit"))
        status, _, body = self.Exchange(Chunked(self.Padded("chunked-past", LIMIT + 1)))
        self.assertEqual(status, 413, body)
        checks += 2
        # Ten clients at once one byte past the limit: each refused, the server fine.
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            answers = list(pool.map(lambda i: self.Exchange(RequestBytes(
                VALIDATE, self.Padded(f"past-{i}", LIMIT + 1)))[0], range(10)))
        self.assertEqual(answers, [413] * 10)
        checks += 10
        after = self.server.wait_sockets(self.base, what="refused connections closed")
        Report(f"webhook body-limit (--max-request-bytes {LIMIT}): {checks} requests — at the limit "
               f"(valid review 200 correct, garbage 400, chunked 200), one byte past 413 + close "
               f"(also chunked and 10 at once), Content-Length 10 GiB 413; sockets after {after}")

    def test_header_floods(self):
        outcomes = {}

        def Flood(kind, extra):
            got = self.Exchange(RequestBytes(MUTATE_POD, Review("pod-managed.json", "flood"), extra))
            outcome = str(got[0])
            self.assertIn(outcome, ("431", "closed"), f"{kind}: {got}")
            outcomes[kind] = outcome

        Flood("one 100 KB header", b"X-Filler: " + b"a" * 100 * 1024 + b"\r\n")
        Flood("5,000 small headers (100 KB)", b"".join(b"X-H%05d: %s\r\n" % (i, b"v" * 8)
                                                       for i in range(5000)))
        Flood("1 MB of headers", b"X-Big: " + b"b" * 1024 * 1024 + b"\r\n")
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            list(pool.map(lambda i: Flood(f"concurrent-{i}", b"X-Filler: " + b"c" * 100 * 1024 + b"\r\n"),
                          range(10)))
        # Just under the header limit (16 KiB) is still served.
        status, _, body = self.Exchange(RequestBytes(MUTATE_POD, Review("pod-managed.json", "big-ok"),
                                                     b"X-Filler: " + b"d" * 12000 + b"\r\n"))
        self.assertIsNone(CheckAnswer(status, body, "big-ok"))
        after = self.server.wait_sockets(self.base, what="flood connections closed")
        kinds = sorted(set(outcomes.values()))
        Report(f"webhook header-flood: {len(outcomes)} floods (100 KB one header, 5,000 headers, 1 MB, "
               f"10 concurrent 100 KB) -> {'/'.join(kinds)}; 12 KB of headers still served; "
               f"sockets after {after}")

    def test_garbage_on_the_tls_port(self):
        n = Knob("FAULT_GARBAGE", 60)
        rng = Rng("garbage")
        hello = ClientHello(self.server.context())
        shapes = [
            lambda: bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 5, 17, 300, 4096]))),
            lambda: rng.randbytes(rng.choice([65536, 1024 * 1024])),
            lambda: b"\x16\x03\x01" + rng.randbytes(rng.randrange(2, 2000)),   # handshake record, junk
            lambda: b"\x17\x03\x03\x40\x00" + rng.randbytes(16384),            # application data, no session
            lambda: hello[:5] + rng.randbytes(len(hello) - 5),                 # a ClientHello's header, junk body
            lambda: RequestBytes(VALIDATE, Review("deployment-valid.json", "plain")),  # plain HTTP
            lambda: b"\x80\x2e\x01\x00\x02" + rng.randbytes(45),               # SSLv2-style hello
        ]
        plaintext_answers = 0
        for i in range(n):
            payload = shapes[i % len(shapes)]()
            with socket.create_connection(("127.0.0.1", self.server.port), timeout=WAIT) as s:
                try:
                    s.sendall(payload)
                except OSError:
                    pass  # closed while we were still sending
                data, _ = ReadUntilClosed(s, timeout=WAIT)
                plaintext_answers += data.startswith(b"HTTP/")
            if i % 10 == 9:
                self.assertIsNone(CheckReview(self.server, f"between-garbage-{i}"))
        self.assertEqual(plaintext_answers, 0)
        after = self.server.wait_sockets(self.base, what="garbage connections closed")
        Report(f"webhook garbage: {n} connections of garbage ({len(shapes)} shapes: random 1 B..1 MB, "
               f"broken TLS records, plain HTTP, SSLv2 hello) all closed without an HTTP answer; "
               f"reviews between them served; sockets after {after}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
