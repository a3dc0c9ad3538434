"""A minimal DNS server for the image test: answers A queries for a fixed
table of names over UDP, NXDOMAIN for other names, an empty answer for
other query types (AAAA). Enough for glibc's stub resolver, so the test can
show that the statically linked glibc in the image reaches the nameserver in
/etc/resolv.conf. Runs in a thread; counts the queries it saw."""

import socket
import struct
import threading

_TYPE_A = 1
_CLASS_IN = 1
# Answers expire at once: every lookup in the test reaches the server.
_TTL_S = 0
# A DNS message over UDP without EDNS is at most 512 bytes.
_MAX_UDP = 512


def _parse_question(msg):
    """(name, qtype, end offset of the question) of a query's first question."""
    labels = []
    i = 12
    while True:
        n = msg[i]
        i += 1
        if n == 0:
            break
        if n & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(msg[i:i + n].decode("ascii").lower())
        i += n
    qtype, _qclass = struct.unpack("!HH", msg[i:i + 4])
    return ".".join(labels), qtype, i + 4


def answer(query, table):
    """The response to `query` (bytes) from `table` {name: IPv4 text}."""
    qid, flags = struct.unpack("!HH", query[:4])
    name, qtype, end = _parse_question(query)
    question = query[12:end]
    rd = flags & 0x0100
    known = name in table
    rcode = 0 if known else 3  # NXDOMAIN
    answers = b""
    count = 0
    if known and qtype == _TYPE_A:
        rdata = socket.inet_aton(table[name])
        # 0xC00C: a pointer to the name in the question.
        answers = struct.pack("!HHHIH", 0xC00C, _TYPE_A, _CLASS_IN, _TTL_S, len(rdata)) + rdata
        count = 1
    header = struct.pack("!HHHHHH", qid, 0x8000 | 0x0400 | rd | 0x0080 | rcode, 1, count, 0, 0)
    return header + question + answers


class DnsStub:
    def __init__(self, table, host="127.0.0.1", port=53):
        self.table = {k.lower().rstrip("."): v for k, v in table.items()}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, port))
        self.sock.settimeout(0.2)
        self.queries = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def Start(self):
        self._thread.start()
        return self

    def _serve(self):
        while not self._stop.is_set():
            try:
                msg, peer = self.sock.recvfrom(_MAX_UDP)
            except socket.timeout:
                continue
            try:
                name, qtype, _ = _parse_question(msg)
                self.queries.append((name, qtype))
                self.sock.sendto(answer(msg, self.table), peer)
            except (ValueError, IndexError, struct.error, UnicodeDecodeError):
                continue

    def Stop(self):
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()
