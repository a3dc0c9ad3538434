"""End-to-end, issue 39: the release paths under the shipped default hold.

With the real `wasd webhook` and `wasd reconciler` on their default flags against the test
API server (whose stand-in schedulers hold only the pods addressed to them, and only while
the group the pod's own scheduler reads is missing):

* H1 — a Deployment whose stored configuration the reconciler rejects (stored past the
  webhook, as an older release accepted it) gets an image change through the ratchet: the
  new ReplicaSet's pods name a group no gang will fill and carry no gate. wasd creates the
  one-member release group, the pods run, and a Warning names how many pods waited. The
  webhook warns on the UPDATE. (On 8a67bc2 the pods stayed Pending for ever.)
* no carrier — the same with no wasd.io/scheduling annotation left, the pod template still
  marked for wasd.
* M1 — pods created while kube-apiserver had GenericWorkload off lost spec.schedulingGroup
  and carry wasd's gate; once the API is served, wasd keeps their gate (lifting it would
  schedule them outside the gang) and posts MemberUnlinked naming them and the fix; the
  pods re-created after a delete are linked and run with the gang.

WASD_TEST_POD_HOLD=gate runs the same with wasd's gate on every backend.
"""
import json
import os
import time
import unittest

from lib.cluster import Env
from lib.manifests import NS, SCHEDULING, deployment, pod_gated, pod_group_of
from lib.wait import wait_for

TIMEOUT = 40
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


def running(pods):
    return [p for p in pods if p["status"].get("phase") == "Running" and p["spec"].get("nodeName")]


class HoldReleaseTest(unittest.TestCase):
    def Store(self, env, obj):
        """Stores `obj` past the webhook (an older release admitted it): a webhook-less Env."""
        return env.create(DEPLOYMENTS, obj)

    def Warnings(self, env, name, reason):
        return [e for e in env.events(reason) if e["involvedObject"]["name"] == name and e["type"] == "Warning"]

    def Releases(self, name, annotations, change, reason):
        """Stores `name` past the webhook, starts the webhook and the reconciler, applies
        `change` (a new ReplicaSet or more pods of the old one, whose pods the webhook
        links to their ReplicaSet's group) and checks that those pods run under a
        one-member release group, and for the Warning `reason` that says so (the executor
        posts it after its writes: the pods may run first). Returns the Events and the
        change's answer headers."""
        with Env(webhook=False) as env:
            obj = deployment(name, 2, labels={"wasd.io/managed": "true"}, scheduling=False,
                             annotations=annotations)
            self.Store(env, obj)
            wait_for(lambda: len(running(env.pods(name))) == 2, TIMEOUT, 0.2, "first pods run (no link)")
            first = {p["metadata"]["name"] for p in env.pods(name)}
            env.start_webhook()
            env.start_reconciler("--leader-elect=false")
            headers = change(env)
            linked = lambda: [p for p in running(env.pods(name)) if p["metadata"]["name"] not in first]
            wait_for(lambda: linked(), TIMEOUT, 0.2, "the pods made after the webhook came run")
            for p in linked():
                owner = p["metadata"]["ownerReferences"][0]
                rs = [r for r in env.replica_sets(name) if r["metadata"]["uid"] == owner["uid"]][0]
                # Linked by the webhook to their ReplicaSet's group, which wasd created as a
                # release group (basic: no gang); gated only in gate hold, and lifted.
                self.assertEqual((p["spec"].get("schedulingGroup") or {}).get("podGroupName"), pod_group_of(rs))
                self.assertFalse(pod_gated(p))
                pgs = {pg["metadata"]["name"]: pg for pg in env.pod_groups()}
                self.assertIn(pod_group_of(rs), pgs)
                self.assertEqual(pgs[pod_group_of(rs)]["spec"]["schedulingPolicy"], {"basic": {}})
            wait_for(lambda: [e for e in self.Warnings(env, name, reason) if "created PodGroup" in e["message"]],
                     TIMEOUT, 0.2, f"a {reason} Warning naming the release group")
            return env.events(), headers

    @staticmethod
    def ImageChange(name):
        def change(env):
            # The ratchet lets it through: the configuration is unchanged.
            code, headers, body = env.srv.Request(
                "PATCH", f"{DEPLOYMENTS}/{name}",
                {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "registry.example/app:2"}]}}}},
                content_type="application/strategic-merge-patch+json")
            assert code == 200, body
            return headers
        return change

    @staticmethod
    def ScaleUp(name):
        def change(env):
            # Through the scale subresource, as an autoscaler does: the old ReplicaSet's
            # template still carries wasd's marker, so its new pod is linked.
            code, headers, body = env.srv.Request(
                "PATCH", f"{DEPLOYMENTS}/{name}/scale", {"spec": {"replicas": 3}},
                content_type="application/merge-patch+json")
            assert code == 200, body
            return headers
        return change

    def test_h1_invalid_stored_configuration_gets_a_release_group(self):
        bad = {SCHEDULING: json.dumps({"schedulingPolicy": {"gang": {"minCount": 0}}})}
        events, headers = self.Releases("h1", bad, self.ImageChange("h1"), "InvalidSchedulingConfiguration")
        warnings = [e for e in events if e["reason"] == "InvalidSchedulingConfiguration"
                    and e["involvedObject"]["name"] == "h1"]
        self.assertTrue(warnings, [e["reason"] for e in events])
        message = " ".join(e["message"] for e in warnings)
        self.assertIn("created PodGroup", message)
        self.assertIn("pod(s)", message)
        self.assertNotIn("stay gated", message)

    def test_no_carrier_gets_a_release_group(self):
        events, _ = self.Releases("nocarrier", {}, self.ScaleUp("nocarrier"), "SchedulingGatesLifted")
        warnings = [e for e in events if e["reason"] == "SchedulingGatesLifted"
                    and e["involvedObject"]["name"] == "nocarrier"]
        self.assertTrue(warnings, [e["reason"] for e in events])
        self.assertIn("created PodGroup", " ".join(e["message"] for e in warnings))

    def test_h2_without_the_workload_api_native_pods_get_the_gate(self):
        """H2: kube-apiserver with GenericWorkload off (1.37 as installed) drops the link and
        serves no Workload API. With default flags the webhook, which discovers that, gives
        every native pod the gate, so none is placed alone, and the reconciler's Warning says
        they are gated (which they are). Once the API is served, the webhook's next discovery
        gives new pods the scheduler hold. (On 8a67bc2 the pods ran one by one while the
        Event said they stayed gated.)"""
        with Env(apiserver_args=["--bookmark-interval", "0.5", "--generic-workload", "off"],
                 webhook_args=["--api-check-interval", "1s"]) as env:
            env.start_reconciler("--leader-elect=false", "--api-check-interval", "1s")
            env.create(DEPLOYMENTS, deployment("h2", 2))
            wait_for(lambda: len(env.pods("h2")) == 2, TIMEOUT, 0.2, "pods created")
            wait_for(lambda: self.Warnings(env, "h2", "APINotServed"), TIMEOUT, 0.2, "APINotServed")
            time.sleep(1.0)
            pods = env.pods("h2")
            self.assertTrue(all(pod_gated(p) for p in pods), "every native pod carries the gate")
            self.assertFalse(running(pods), "no pod of the gang placed alone")
            # Posted when the Deployment came (its pods may not exist yet) and again when
            # how they wait changed; never a word of a hold the pods do not have.
            messages = [e["message"] for e in self.Warnings(env, "h2", "APINotServed")]
            self.assertTrue(any("pod(s) stay gated by wasd" in m for m in messages), messages)
            for m in messages:
                self.assertNotIn("held by", m)
                self.assertNotIn("carry neither", m)
            # The API is turned on: after the webhook's next look, new pods are linked and
            # carry no gate; the gang runs once its PodGroup exists.
            env.srv.SetGenericWorkload(True)
            env.srv.SetSchedulingVersions(["v1beta1"])
            time.sleep(2.5)  # more than one --api-check-interval
            env.create(DEPLOYMENTS, deployment("after", 2))
            wait_for(lambda: len(running(env.pods("after"))) == 2, TIMEOUT, 0.2, "the new gang runs")
            for p in env.pods("after"):
                self.assertFalse(pod_gated(p))
                self.assertTrue((p["spec"].get("schedulingGroup") or {}).get("podGroupName"))

    def test_m1_pods_that_lost_their_link_keep_the_gate(self):
        # GenericWorkload off on kube-apiserver: the link is dropped, no Workload API.
        with Env(apiserver_args=["--bookmark-interval", "0.5", "--generic-workload", "off"],
                 webhook_args=["--api-check-interval", "1s"]) as env:
            env.create(DEPLOYMENTS, deployment("m1", 2))
            wait_for(lambda: len(env.pods("m1")) == 2, TIMEOUT, 0.2, "pods created")
            pods = env.pods("m1")
            for p in pods:
                self.assertNotIn("schedulingGroup", p["spec"])  # dropped by the API server
                self.assertTrue(pod_gated(p), "with no Workload API the webhook uses the gate")
            time.sleep(1.0)
            self.assertFalse(running(env.pods("m1")), "no pod of the gang runs alone")
            # The cluster is upgraded: the gate on, the API served.
            env.srv.SetGenericWorkload(True)
            env.srv.SetSchedulingVersions(["v1beta1"])
            env.start_reconciler("--leader-elect=false", "--api-check-interval", "1s")
            wait_for(lambda: self.Warnings(env, "m1", "MemberUnlinked"), TIMEOUT, 0.2, "MemberUnlinked")
            message = self.Warnings(env, "m1", "MemberUnlinked")[0]["message"]
            self.assertIn("GenericWorkload was off", message)
            self.assertIn("delete them", message)
            self.assertTrue(all(pod_gated(p) for p in env.pods("m1")), "the unlinked pods keep the gate")
            self.assertFalse(running(env.pods("m1")))
            # The fix the Warning names: delete them; the replacements are linked.
            for p in pods:
                env.delete(f"/api/v1/namespaces/{NS}/pods/{p['metadata']['name']}")
            wait_for(lambda: len(running(env.pods("m1"))) == 2, TIMEOUT, 0.2, "the gang runs, linked")
            for p in env.pods("m1"):
                self.assertTrue((p["spec"].get("schedulingGroup") or {}).get("podGroupName"))


if __name__ == "__main__":
    unittest.main()
