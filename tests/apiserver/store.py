"""In-memory object storage with a global resourceVersion and a bounded event history.

One lock (a Condition) guards everything; watchers wait on it. The history keeps the
last `history` events; watching from an older resourceVersion is "too old" (410), as
when etcd has compacted. Thread-safe.
"""
import collections
import copy
import threading


class ApiError(Exception):
    """An error answered as a metav1.Status."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def Status(self):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            st["details"] = self.details
        return st


def NotFound(res, name):
    return ApiError(404, "NotFound", f'{res.group_resource} "{name}" not found',
                    {"name": name, "group": res.group, "kind": res.plural})


def Conflict(res, name, why="the object has been modified; please apply your changes to the latest version and try again"):
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {res.group_resource} "{name}": {why}',
                    {"name": name, "group": res.group, "kind": res.plural})


def AlreadyExists(res, name):
    return ApiError(409, "AlreadyExists", f'{res.group_resource} "{name}" already exists',
                    {"name": name, "group": res.group, "kind": res.plural})


def Invalid(res, name, causes):
    """causes: list of (field, type word, message-without-path). Message like kube's."""
    parts = [f"{f}: {m}" for f, _, m in causes]
    agg = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    kind = res.kind + (f".{res.group}" if res.group else "")
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {agg}',
                    {"name": name, "group": res.group, "kind": res.kind,
                     "causes": [{"reason": t, "message": m, "field": f} for f, t, m in causes]})


def Expired(message):
    return ApiError(410, "Expired", message)


class Store:
    def __init__(self, history=2000):
        self.cond = threading.Condition(threading.RLock())
        self.rv = 1
        self.objects = {}  # (key, namespace, name) -> object
        self.events = collections.deque()
        self.history = history
        self.compacted = 0  # watches from a resourceVersion below this are too old
        self.closed = False

    def _Record(self, key, etype, obj, old):
        self.events.append((self.rv, key, etype, copy.deepcopy(obj), copy.deepcopy(old)))
        while len(self.events) > self.history:
            dropped = self.events.popleft()
            self.compacted = dropped[0]
        self.cond.notify_all()

    def Compact(self):
        """Forget the whole history (every older resourceVersion becomes too old)."""
        with self.cond:
            self.events.clear()
            self.compacted = self.rv
            self.cond.notify_all()

    def Get(self, key, ns, name):
        with self.cond:
            obj = self.objects.get((key, ns or "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def List(self, key, ns=None):
        """Objects of a resource (optionally one namespace), sorted by namespace/name."""
        with self.cond:
            items = [copy.deepcopy(o) for (k, n, _), o in self.objects.items()
                     if k == key and (ns is None or n == ns)]
            rv = self.rv
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return items, rv

    def AllObjects(self):
        with self.cond:
            return [(k, copy.deepcopy(o)) for (k, _, _), o in self.objects.items()]

    def Put(self, key, obj, etype):
        """Store obj (ADDED or MODIFIED), stamping a fresh resourceVersion; returns a copy."""
        with self.cond:
            meta = obj["metadata"]
            ident = (key, meta.get("namespace", ""), meta["name"])
            old = self.objects.get(ident)
            self.rv += 1
            meta["resourceVersion"] = str(self.rv)
            self.objects[ident] = copy.deepcopy(obj)
            self._Record(key, etype, obj, old)
            return copy.deepcopy(obj)

    def Remove(self, key, obj):
        """Delete obj; the DELETED event carries a new resourceVersion."""
        with self.cond:
            meta = obj["metadata"]
            ident = (key, meta.get("namespace", ""), meta["name"])
            old = self.objects.pop(ident, None)
            if old is None:
                return None
            self.rv += 1
            old = copy.deepcopy(old)
            old["metadata"]["resourceVersion"] = str(self.rv)
            self._Record(key, "DELETED", old, old)
            return old

    def EventsSince(self, rv):
        """Events after rv, or None when rv is older than the kept history."""
        with self.cond:
            if rv < self.compacted:
                return None
            return [e for e in self.events if e[0] > rv]

    def Close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()
