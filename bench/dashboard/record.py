"""Record a run of wasd for the dashboard: the test API server with its gang scheduler
and three GPU Nodes, the real `wasd webhook` and `wasd reconciler` (tests/lib's Env),
a small scenario of gang Deployments, and both components' /metrics scraped every
`interval` seconds into JSON lines.

Each line is one scrape of one component,
    {"t": unix seconds, "target": {"job", "namespace", "instance"},
     "samples": [[name, {label: value}, value], ...]}
or one step of the scenario, {"t": unix seconds, "event": text}.
The target labels are the ones the chart's ServiceMonitor gives Prometheus (the
release namespace `wasd-system`), so the dashboard's `namespace="$namespace"`
selects them; promql.Store applies Prometheus' exported_ rule on conflicts.

Every process runs on 127.0.0.1 and is stopped by its PID (Env's own handling),
also when the scenario fails. Needs the tests/ directory on sys.path.
"""
import json
import threading
import time

from lib import cluster
from lib.manifests import NS, deployment
from lib.promtext import parse
from lib.webhook import Webhook

RELEASE_NAMESPACE = "wasd-system"
ZONE = "topology.kubernetes.io/zone"
GPU = "nvidia.com/gpu"
SCRAPE_TIMEOUT_SECONDS = 2.0  # a scrape of loopback /metrics answers in milliseconds


def _webhook_with_metrics(*args, **kwargs):
    """Env starts its webhook with metrics off; the recording needs them, so record()
    puts this in lib.cluster's place of Webhook (for the rest of the process)."""
    kwargs["metrics"] = True
    return Webhook(*args, **kwargs)


def node(name, zone, gpus):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", GPU: str(gpus), "pods": "110"}}}


def gang(name, replicas, min_count, gpus):
    """An opted-in Deployment whose members must share a zone, each requesting `gpus`."""
    d = deployment(name, replicas=replicas, min_count=min_count,
                   extra_config={"schedulingConstraints": {"topology": [{"key": ZONE}]}})
    req = {"cpu": "100m"}
    if gpus:
        req[GPU] = str(gpus)
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": req, "limits": {GPU: str(gpus)} if gpus else {}}
    return d


class Scraper(threading.Thread):
    """Scrapes each target every `interval` seconds until stop(); writes JSON lines."""

    def __init__(self, targets, out, interval):
        super().__init__(daemon=True)
        self.targets = targets  # [(labels, fetch)] fetch() -> exposition text
        self.out = out
        self.interval = interval
        self.stopping = threading.Event()
        self.lock = threading.Lock()  # one writer of `out` at a time (scrapes, events)
        self.scrapes = 0
        self.error = None  # the exception that ended run() early, raised again by stop()

    def write(self, obj):
        with self.lock:
            self.out.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def run(self):
        try:
            self._loop()
        except Exception as e:  # noqa: BLE001 (handed to the main thread by stop())
            self.error = e

    def _loop(self):
        next_at = time.time()
        while not self.stopping.is_set():
            for labels, fetch in self.targets:
                t = time.time()
                samples = [[name, lbl, value]
                           for family in parse(fetch()).values()
                           for name, lbl, value in family.samples]
                self.write({"t": round(t, 3), "target": labels, "samples": samples})
                self.scrapes += 1
            next_at += self.interval
            self.stopping.wait(max(0.0, next_at - time.time()))

    def stop(self):
        """Stops scraping; raises the exception that ended it early, if any."""
        self.stopping.set()
        self.join(60)  # a scrape is bounded by the clients' own timeouts (2 s, 20 s)
        if self.error is not None:
            raise self.error


# The scenario: (seconds after the recording starts, what, action(env)).
def _scenario():
    patch_template = {"spec": {"template": {"metadata": {"annotations": {"rollout": "2"}}}}}
    deployments = f"/apis/apps/v1/namespaces/{NS}/deployments"
    return [
        (3, "web: 3 CPU-only members, minCount 3", lambda env: env.apply(gang("web", 3, 3, 0))),
        (8, "inference: 2 members of 1 GPU", lambda env: env.apply(gang("inference", 2, 2, 1))),
        (15, "trainer: 8 members of 1 GPU in one zone (zone-a has room for 4 more)",
         lambda env: env.apply(gang("trainer", 8, 8, 1))),
        (28, "inference scaled to 8: 4 more fit in zone-a, 2 wait", lambda env: env.scale("inference", 8)),
        (40, "web rolled out (new template)", lambda env: env.patch(f"{deployments}/web", patch_template)),
        (52, "trainer deleted", lambda env: env.srv.Kubectl("delete", "deployment", "trainer", "-n", NS)),
        (60, "node a3 (zone-a, 2 GPUs) added: the scale-up is placed",
         lambda env: env.apply(node("a3", "zone-a", 2))),
    ]


def record(out, duration=80.0, interval=1.0, log=lambda t, what: None):
    """Runs the scenario for `duration` seconds (its steps take 60; a shorter duration
    ends after them), scraping every `interval` seconds into the writable `out`, each
    step a line {"t", "event"} and a call log(t, what). Returns the number of scrapes
    written; raises what a step or a scrape raised."""
    cluster.Webhook = _webhook_with_metrics
    env = cluster.Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler"))
    with env:
        for n in (node("a1", "zone-a", 4), node("a2", "zone-a", 2), node("b1", "zone-b", 4)):
            env.apply(n)
        # Leader election on (its Lease in wasd-system), as the chart runs it.
        rec = env.start_reconciler("--resync-period", "10s")

        def target(job, port):
            return {"job": job, "namespace": RELEASE_NAMESPACE, "instance": f"127.0.0.1:{port}"}

        scraper = Scraper([(target("wasd-webhook", env.webhook.metrics_port), env.webhook.metrics_text),
                           (target("wasd-reconciler", rec.metrics_port), rec.metrics_text)],
                          out, interval)
        start = time.time()
        scraper.start()
        try:
            for at, what, action in _scenario():
                time.sleep(max(0.0, start + at - time.time()))
                now = time.time()
                scraper.write({"t": round(now, 3), "event": what})
                log(now, what)
                action(env)
            time.sleep(max(0.0, start + duration - time.time()))
        finally:
            scraper.stop()
        return scraper.scrapes
