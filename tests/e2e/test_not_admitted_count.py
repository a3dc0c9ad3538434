"""End-to-end: `wasd_gangs{reason="NotAdmitted"}` follows the cluster as
Deployments the webhook never saw come, change and go (issue 42). The count
is kept by the reconciler's cache of unmarked Deployments as its events
arrive (reconciler/caches.cc), not recomputed per scrape, so every kind of
event must move it: a create, an update that drops or restores the
annotation, a label that moves the Deployment out of the cache's selector
(the webhook's marker), and a delete.

No webhook runs here (Env(webhook=False)): every Deployment created is one
the webhook never admitted.
"""
import re
import unittest

from lib.cluster import Env
from lib.manifests import NS, SCHEDULING, deployment
from lib.wait import wait_for

WAIT = 20.0  # bound, in seconds, of each wait for the count


def not_admitted(rec):
    m = re.search(r'^wasd_gangs\{reason="NotAdmitted"\} (\d+)$', rec.metrics_text(), re.M)
    return int(m.group(1)) if m else None


class NotAdmittedCountTest(unittest.TestCase):
    def test_the_count_follows_creates_updates_and_deletes(self):
        with Env(webhook=False) as env:
            rec = env.start_reconciler()
            path = f"/apis/apps/v1/namespaces/{NS}/deployments"

            def expect(n, what):
                wait_for(lambda: not_admitted(rec) == n, WAIT, 0.1,
                         what=f"NotAdmitted {n} after {what} (now {not_admitted(rec)})")

            expect(0, "start")
            for name in ("a", "b", "c"):
                env.create(path, deployment(name, replicas=0))
            env.create(path, deployment("plain", replicas=0, scheduling=False))
            expect(3, "three carriers and one plain Deployment")

            env.patch(f"{path}/a", {"metadata": {"annotations": {SCHEDULING: None}}})
            expect(2, "the annotation removed from a")
            env.patch(f"{path}/plain", {"metadata": {"annotations": {
                SCHEDULING: '{"schedulingPolicy": {"gang": {"minCount": 1}}}'}}})
            expect(3, "the annotation added to plain")
            env.patch(f"{path}/b", {"metadata": {"labels": {"wasd.io/managed": "true"}}})
            expect(2, "b marked (it leaves the cache)")
            self.assertEqual(env.delete(f"{path}/c"), 200)
            expect(1, "c deleted")
            env.patch(f"{path}/b", {"metadata": {"labels": {"wasd.io/managed": None}}})
            expect(2, "b unmarked again")
            self.assertEqual(env.delete(f"{path}/plain"), 200)
            self.assertEqual(env.delete(f"{path}/b"), 200)
            expect(0, "every carrier gone")


if __name__ == "__main__":
    unittest.main()
