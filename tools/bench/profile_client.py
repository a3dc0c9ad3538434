"""Client of tools/bench/profile.sh: waits for the webhook under callgrind, sends
one warm-up request, zeroes callgrind's counters, sends --count requests over
one kept-alive TLS connection (each answer must be HTTP 200), and dumps the
counters under the name --dump. Loopback only; every wait is bounded."""
import argparse
import http.client
import socket
import ssl
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--fresh", action="store_true",
                    help="a new TCP connection and full TLS handshake per request")
    ap.add_argument("--resume", action="store_true",
                    help="with --fresh: each new connection resumes the first one's TLS session")
    args = ap.parse_args()
    body = open(args.body, "rb").read()
    ctx = ssl.create_default_context(cafile=args.ca)

    # Start-up under callgrind takes seconds: poll for at most 120 s.
    deadline = time.time() + 120
    while True:
        conn = http.client.HTTPSConnection("localhost", args.port, timeout=60, context=ctx)
        try:
            conn.connect()
            break
        except OSError:
            conn.close()
            if time.time() > deadline:
                raise SystemExit("profile_client: the webhook did not come up")
            time.sleep(0.5)

    session = None

    def post():
        nonlocal conn, session
        if args.fresh:
            conn.close()
            conn = http.client.HTTPSConnection("localhost", args.port, timeout=60, context=ctx)
            if session is not None:  # http.client cannot pass a session: connect by hand
                raw = socket.create_connection(("127.0.0.1", args.port), timeout=60)
                conn.sock = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
                if not conn.sock.session_reused:
                    raise SystemExit("profile_client: the server did not resume the session")
        conn.request("POST", args.path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if args.resume and session is None:
            session = conn.sock.session  # TLS 1.3: the ticket arrives after the handshake
        if resp.status != 200:
            raise SystemExit(f"profile_client: HTTP {resp.status}: {data[:200]!r}")

    post()
    subprocess.run(["callgrind_control", "--zero", str(args.pid)], check=True,
                   capture_output=True, timeout=60)
    for _ in range(args.count):
        post()
    subprocess.run(["callgrind_control", f"--dump={args.dump}", str(args.pid)], check=True,
                   capture_output=True, timeout=120)
    conn.close()


if __name__ == "__main__":
    main()
