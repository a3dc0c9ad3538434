"""https_get: one GET over TLS as a Prometheus scrape sends it (a bearer
token, a CA and a server name to verify), for the tests of wasd's HTTPS
/metrics (tests/e2e/test_secure_metrics.py, tests/cluster)."""
import socket
import ssl


def https_get(host, port, path, token=None, ca_pem=None, server_name=None, timeout=10):
    """GET over TLS as a scraper does it: (status, headers, body). The peer is
    verified against `ca_pem` for `server_name` (ca_pem None: not verified).
    One request, Connection: close; the whole answer read, bounded."""
    ctx = ssl.create_default_context(cadata=ca_pem) if ca_pem else ssl._create_unverified_context()
    if ca_pem:
        ctx.check_hostname = True
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
    if token is not None:
        request += f"Authorization: Bearer {token}\r\n"
    with socket.create_connection((host, port), timeout=timeout) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_name or host) as s:
            s.sendall((request + "\r\n").encode())
            data = b""
            while len(data) < 64 << 20:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        body = out
    return status, headers, body.decode()
