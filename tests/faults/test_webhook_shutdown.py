"""Fault suite, webhook part: SIGTERM under load.

Three kinds of clients hammer the webhook: keep-alive clients sending one review
after the other on their connection, clients opening a fresh connection per review,
and clients holding a request half sent (headers and half the body) when the signal
comes. Then SIGTERM. Every request whose bytes were all written before the signal,
and every half-sent one (finished after the signal), must get a complete, correct
answer; requests begun after the signal may be refused (connection refused or
closed before any answer) and are counted apart. The process exits 0 within the
grace period.

A fourth group makes the sharpest case certain: 32 keep-alive connections that
have carried one review each write their next review while the server is
stopped (SIGSTOP, as a descheduled process on a busy node) — half just before
the SIGTERM, half just after it — then SIGCONT: the server learns of the
requests and the signal at once, and must answer all 32. (Before the fix
of admission_session.cc's drain, idle keep-alive connections were closed at once
and such requests were lost.)

Knobs: FAULT_SIGTERM_RUNS (1; scripts/faults.sh runs more), FAULT_SIGTERM_CLIENTS
(24 keep-alive clients; plus 8 fresh-connection, 8 half-sent, 32 primed).
"""
import shutil
import signal
import ssl
import tempfile
import threading
import time
import unittest
import http.client

from faultlib import (VALIDATE, WAIT, CheckAnswer, Knob, ReadResponse, Report,
                      RequestBytes, Review, Rng, StartWebhook)
from lib.wait import wait_for

GRACE = 10  # --shutdown-grace-period, seconds
N_PRIMED = 32  # keep-alive connections whose next request is written around SIGTERM


class Tally:
    """Outcomes of every request, shared by the client threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.term_sent_at = None  # monotonic time just before os.kill(SIGTERM)
        self.sent_before = 0      # requests fully written before the signal
        self.answered = 0         # correct answers (any time)
        self.failures = []        # requests written before the signal, not answered correctly
        self.refused_after = 0    # begun after the signal, refused or closed unanswered
        self.half_sent = 0
        self.refused_reasons = {}
        self.primed_answered = 0

    def Signalled(self):
        return self.term_sent_at is not None

    def Before(self, t):
        return self.term_sent_at is None or t < self.term_sent_at

    def Outcome(self, uid, sent_done_at, why, began_at=None):
        with self.lock:
            before = self.Before(sent_done_at)
            if before:
                self.sent_before += 1
            if why is None:
                self.answered += 1
            elif before or (began_at is not None and self.Before(began_at) and "half" in uid):
                self.failures.append((uid, why))
            else:
                self.refused_after += 1
                reason = why.split(":")[0] + ":" + why.split(":")[1] if ":" in why else why
                self.refused_reasons[reason] = self.refused_reasons.get(reason, 0) + 1


class SigtermUnderLoadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wasd-faults-term-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def RunOnce(self, run, rng):
        server = StartWebhook(self.tmp, ("--io-threads", "2", "--shutdown-grace-period", f"{GRACE}s",
                                    "--shutdown-delay", "0s",
                                    "--log-level", "warn"))
        self.addCleanup(server.stop, signal.SIGKILL)
        tally = Tally()
        stop = threading.Event()
        term = threading.Event()
        n_keep, n_fresh, n_half = (Knob("FAULT_SIGTERM_CLIENTS", 24), 8, 8)

        def KeepAlive(i):
            seq = 0
            s = None
            while not stop.is_set():
                uid = f"r{run}-keep-{i}-{seq}"
                seq += 1
                began = time.monotonic()
                try:
                    if s is None:
                        if tally.Signalled():
                            return  # a new connection after the signal would only be refused
                        s = server.tls_socket()
                    s.sendall(RequestBytes(VALIDATE, Review("deployment-valid.json", uid)))
                    done = time.monotonic()
                except (OSError, ssl.SSLError) as e:
                    tally.Outcome(uid, time.monotonic(), f"send: {type(e).__name__}", began)
                    s = None
                    continue
                try:
                    status, resp, body = ReadResponse(s)
                    why = CheckAnswer(status, body, uid)
                    if (resp.getheader("Connection") or "").lower() == "close":
                        s.close()
                        s = None
                except (OSError, ssl.SSLError, http.client.HTTPException) as e:
                    why = f"read: {type(e).__name__}: {e}"
                    s.close()
                    s = None
                tally.Outcome(uid, done, why, began)
            if s is not None:
                s.close()

        def Fresh(i):
            seq = 0
            while not stop.is_set() and not tally.Signalled():
                uid = f"r{run}-fresh-{i}-{seq}"
                seq += 1
                began = time.monotonic()
                try:
                    s = server.tls_socket()
                except (OSError, ssl.SSLError):
                    tally.Outcome(uid, time.monotonic(), "connect", began)
                    continue
                done = None
                try:
                    s.sendall(RequestBytes(VALIDATE, Review("deployment-valid.json", uid), keep_alive=False))
                    done = time.monotonic()
                    status, _, body = ReadResponse(s)
                    why = CheckAnswer(status, body, uid)
                except (OSError, ssl.SSLError, http.client.HTTPException) as e:
                    done = done or time.monotonic()
                    why = f"{type(e).__name__}: {e}"
                finally:
                    s.close()
                tally.Outcome(uid, done, why, began)

        half_ready = threading.Barrier(n_half + 1, timeout=WAIT)

        def HalfSent(i):
            uid = f"r{run}-half-{i}"
            body = Review("deployment-valid.json", uid)
            request = RequestBytes(VALIDATE, body)
            cut = len(request) - len(body) // 2
            began = time.monotonic()
            s = server.tls_socket()
            try:
                s.sendall(request[:cut])
                half_ready.wait()
                term.wait(WAIT)
                time.sleep(0.3)  # well after the signal
                try:
                    s.sendall(request[cut:])
                    status, resp, answer = ReadResponse(s)
                    why = CheckAnswer(status, answer, uid)
                    if why is None and (resp.getheader("Connection") or "").lower() != "close":
                        why = "no Connection: close while draining"
                except (OSError, ssl.SSLError, http.client.HTTPException) as e:
                    why = f"{type(e).__name__}: {e}"
                with tally.lock:
                    tally.half_sent += 1
                tally.Outcome(uid, began, why, began)
            finally:
                s.close()

        threads = ([threading.Thread(target=KeepAlive, args=(i,), daemon=True) for i in range(n_keep)] +
                   [threading.Thread(target=Fresh, args=(i,), daemon=True) for i in range(n_fresh)] +
                   [threading.Thread(target=HalfSent, args=(i,), daemon=True) for i in range(n_half)])
        # Keep-alive connections that have carried one review and then send their
        # next one immediately before the signal: the server has the bytes but may
        # not have read them yet (the sharpest case of "already sent").
        primed = []
        for i in range(N_PRIMED):
            s = server.tls_socket()
            self.addCleanup(s.close)
            uid = f"r{run}-primed-{i}-0"
            s.sendall(RequestBytes(VALIDATE, Review("deployment-valid.json", uid)))
            self.assertIsNone(CheckAnswer(*ReadResponse(s)[::2], uid))
            primed.append(s)
        for t in threads:
            t.start()
        half_ready.wait()
        wait_for(lambda: tally.answered >= 200, what="load running")
        time.sleep(rng.uniform(0.0, 0.5))  # a random point of the load
        # The server is descheduled (as on a busy node) while the primed requests
        # arrive and the signal comes; when it runs again it learns of both at once.
        # Half of them write before the signal, half just after it, all while the
        # server is stopped: for the server both halves and the signal are there at
        # once, and it must answer every request it received.
        server.signal(signal.SIGSTOP)
        half = N_PRIMED // 2
        try:
            for i, s in enumerate(primed[:half]):
                s.sendall(RequestBytes(VALIDATE, Review("deployment-valid.json", f"r{run}-primed-{i}-1")))
            with tally.lock:
                tally.term_sent_at = time.monotonic()
                server.signal(signal.SIGTERM)
            for i, s in enumerate(primed[half:], half):
                s.sendall(RequestBytes(VALIDATE, Review("deployment-valid.json", f"r{run}-primed-{i}-1")))
        finally:
            server.signal(signal.SIGCONT)
        term.set()
        for i, s in enumerate(primed):
            uid = f"r{run}-primed-{i}-1"
            try:
                status, _, body = ReadResponse(s)
                why = CheckAnswer(status, body, uid)
            except (OSError, ssl.SSLError, http.client.HTTPException) as e:
                why = f"read: {type(e).__name__}: {e}"
            with tally.lock:
                tally.primed_answered += why is None
            tally.Outcome(uid, 0.0, why)  # counted as sent before the signal: must be answered
        try:
            rc = server.proc.wait(timeout=GRACE + 10)
        except Exception:
            rc = None
        exited_after = time.monotonic() - tally.term_sent_at
        stop.set()
        for t in threads:
            t.join(WAIT)
        self.assertFalse(any(t.is_alive() for t in threads), "client threads ended")
        return tally, rc, exited_after

    def test_sigterm_under_load_loses_no_request(self):
        runs = Knob("FAULT_SIGTERM_RUNS", 1)
        rng = Rng("sigterm")
        totals = {"sent": 0, "answered": 0, "failed": 0, "refused": 0, "half": 0}
        slowest_exit = 0.0
        refused_reasons = {}
        for run in range(runs):
            tally, rc, exited_after = self.RunOnce(run, rng)
            self.assertEqual(tally.failures[:5], [], f"run {run}: {len(tally.failures)} requests lost")
            self.assertEqual(rc, 0, f"run {run}: exit status")
            self.assertLess(exited_after, GRACE + 2, f"run {run}: exit within the grace period")
            self.assertEqual(tally.half_sent, 8)
            totals["sent"] += tally.sent_before
            totals["answered"] += tally.answered
            totals["failed"] += len(tally.failures)
            totals["refused"] += tally.refused_after
            totals["half"] += tally.half_sent
            slowest_exit = max(slowest_exit, exited_after)
            for k, v in tally.refused_reasons.items():
                refused_reasons[k] = refused_reasons.get(k, 0) + v
        Report(f"webhook sigterm-under-load: {runs} run(s), 24 keep-alive + 8 fresh-connection clients "
               f"+ 8 half-sent requests + {N_PRIMED} keep-alive requests written around the signal while the server was stopped: {totals['sent']} requests written before SIGTERM, "
               f"{totals['answered']} answered correctly, {totals['failed']} failed, "
               f"{totals['half']} half-sent finished after the signal and answered, "
               f"{totals['refused']} begun after the signal refused ({refused_reasons or 'none'}); exit 0 within "
               f"{slowest_exit:.1f} s (grace {GRACE} s)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
