"""Evaluates the chart's matchConditions expression (as rendered) with the
CEL subset evaluator against admission requests, to show the registration
scope has no hole: an UPDATE that removes the wasd.io/scheduling annotation
is still sent to the webhook, unrelated Deployments are not, and the
expression never errors (an error would apply the failurePolicy to every
Deployment in the cluster). The end-to-end proof against an API server is
in the e2e tests.
"""

import copy
import unittest


import cel_subset
from lib import chart

ANNOTATION = "wasd.io/scheduling"
MARKER = "wasd.io/managed"


def deployment(annotations=None, labels=None, scheduling=None, template_labels=None):
    meta = {"name": "web", "namespace": "apps", "uid": "u-1"}
    if annotations is not None:
        meta["annotations"] = annotations
    if labels is not None:
        meta["labels"] = labels
    spec = {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": dict({"app": "web"}, **(template_labels or {}))},
                         "spec": {"containers": []}}}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


GANG = '{"schedulingPolicy":{"gang":{"minCount":3}}}'
OPTED = deployment(annotations={ANNOTATION: GANG}, labels={MARKER: "true"})
PLAIN = deployment(annotations={"deployment.kubernetes.io/revision": "1"}, labels={"app": "web"})
BARE = deployment()  # no annotations, no labels at all


def without_annotation(obj):
    out = copy.deepcopy(obj)
    del out["metadata"]["annotations"][ANNOTATION]
    return out


def without_marker(obj):
    out = copy.deepcopy(obj)
    del out["metadata"]["labels"][MARKER]
    return out


# (description, object, oldObject, want): CREATE has oldObject null. `want`
# is the same for both Deployment webhooks unless it is a dict by webhook.
MUTATE, VALIDATE = "deployments.mutate.wasd.io", "deployments.validate.wasd.io"
STRAY = deployment(template_labels={MARKER: "true"})  # copied without the annotation (M2)
CASES = [
    ("CREATE opted in by annotation", OPTED, None, True),
    ("CREATE opted in by annotation only (before mutation adds the marker)",
     without_marker(OPTED), None, True),
    ("CREATE opted in by spec.scheduling", deployment(scheduling={"schedulingPolicy": {"gang": {}}}), None, True),
    ("CREATE carrying only the marker label", deployment(labels={MARKER: "true"}), None, True),
    ("CREATE with a misspelt wasd.io/ key (warned about)",
     deployment(annotations={"wasd.io/schedulng": GANG}), None, True),
    ("CREATE with another wasd.io/ key", deployment(annotations={"wasd.io/backend": "native"}), None, True),
    ("CREATE with a key that only contains wasd.io/",
     deployment(annotations={"example.com/wasd.io/scheduling": GANG}), None, False),
    ("CREATE with an empty annotation map", deployment(annotations={}), None, False),
    ("CREATE with a stray pod-template marker only", STRAY, None, {MUTATE: True, VALIDATE: False}),
    ("UPDATE keeping a stray pod-template marker", STRAY, STRAY, {MUTATE: True, VALIDATE: False}),
    ("CREATE of an unrelated Deployment", PLAIN, None, False),
    ("CREATE without annotations or labels", BARE, None, False),
    ("CREATE without a pod template (malformed)",
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {}}, None, False),
    ("UPDATE removing the annotation", without_annotation(OPTED), OPTED, True),
    ("UPDATE removing the annotation and the marker",
     without_marker(without_annotation(OPTED)), OPTED, True),
    ("UPDATE removing spec.scheduling", BARE, deployment(scheduling={"schedulingPolicy": {"basic": {}}}), True),
    ("UPDATE adding the annotation", OPTED, PLAIN, True),
    ("UPDATE of an opted-in Deployment", OPTED, OPTED, True),
    ("UPDATE of an unrelated Deployment", PLAIN, PLAIN, False),
    ("UPDATE of a bare Deployment", BARE, BARE, False),
    ("DELETE-shaped request (object null)", None, PLAIN, False),
]


def expressions():
    objs = chart.render()
    out = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for wh in chart.one(objs, kind)["webhooks"]:
            for mc in wh.get("matchConditions", []):
                out[(kind, wh["name"], mc["name"])] = mc["expression"]
    return out


class MatchConditions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exprs = expressions()

    def test_the_deployment_webhooks_have_their_own_conditions(self):
        self.assertEqual(sorted(k[1] for k in self.exprs), [MUTATE, VALIDATE])
        # The mutating one sees everything the validating one does, plus the
        # stray template marker (asserted case by case below).
        self.assertNotEqual(self.exprs[("MutatingWebhookConfiguration", MUTATE, "wasd-opted-in")],
                            self.exprs[("ValidatingWebhookConfiguration", VALIDATE, "wasd-opted-in")])

    def test_requests_reaching_the_webhook(self):
        for key, text in self.exprs.items():
            program = cel_subset.compile_expression(text)
            for desc, obj, old, want in CASES:
                if isinstance(want, dict):
                    want = want[key[1]]
                env = {"object": obj, "oldObject": old, "request": {"operation": "UPDATE" if old else "CREATE"}}
                got = cel_subset.evaluate(program, env)
                self.assertIsInstance(got, bool, "%s: %s evaluated to %r" % (key[1], desc, got))
                self.assertEqual(got, want, "%s: %s" % (key[1], desc))

    def test_extra_conditions_are_added_not_substituted(self):
        extra = {"name": "skip-ci", "expression": "!has(object.metadata.labels)"}
        path = chart.write_values({"admission": {"matchConditions": [extra]}})
        objs = chart.render(values_files=[path])
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for wh in chart.one(objs, kind)["webhooks"]:
                if "matchConditions" in wh:
                    self.assertEqual(wh["matchConditions"][0]["name"], "wasd-opted-in")
                    self.assertEqual(wh["matchConditions"][1:], [extra])
        path = chart.write_values({"admission": {"matchConditions": [
            {"name": "wasd-opted-in", "expression": "true"}]}})
        with self.assertRaises(chart.RenderError) as cm:
            chart.render(values_files=[path])
        self.assertIn("the name wasd-opted-in is the chart's own", str(cm.exception))

    def test_an_object_only_condition_would_be_caught(self):
        # Negative control: the naive condition that looks only at `object`
        # lets the annotation-removing UPDATE bypass the webhook; the cases
        # above must tell it apart from the chart's expression.
        naive = cel_subset.compile_expression(
            "has(object.metadata.annotations) && 'wasd.io/scheduling' in object.metadata.annotations")
        env = {"object": without_marker(without_annotation(OPTED)), "oldObject": OPTED}
        self.assertIs(cel_subset.evaluate(naive, env), False)
        # ...and an unguarded selection errors on a bare object.
        unguarded = cel_subset.compile_expression("'wasd.io/scheduling' in object.metadata.annotations")
        self.assertIsInstance(cel_subset.evaluate(unguarded, {"object": BARE, "oldObject": None}),
                              cel_subset.CelError)

    def test_exists_and_starts_with_follow_cel(self):
        ev = lambda text, env: cel_subset.evaluate(cel_subset.compile_expression(text), env)  # noqa: E731
        self.assertIs(ev("object.a.exists(k, k.startsWith('w/'))", {"object": {"a": {"x": 1, "w/y": 2}}}), True)
        self.assertIs(ev("object.a.exists(k, k.startsWith('w/'))", {"object": {"a": {}}}), False)
        # An error for one element and false for the rest is an error...
        self.assertIsInstance(ev("object.a.exists(k, object.b.startsWith(k))",
                                 {"object": {"a": {"x": 1}}}), cel_subset.CelError)
        # ...but a true element absorbs it.
        self.assertIs(ev("object.a.exists(k, k == 'y' || object.b)", {"object": {"a": ["x", "y"]}}), True)
        self.assertIsInstance(ev("object.a.exists(k, true)", {"object": {"a": "s"}}), cel_subset.CelError)
        with self.assertRaises(cel_subset.CelSyntaxError):
            cel_subset.compile_expression("object.a.exists(object, true)")
        with self.assertRaises(cel_subset.CelSyntaxError):
            cel_subset.compile_expression("object.a.endsWith('x')")

    def test_evaluator_follows_cel_error_rules(self):
        ev = lambda text, env: cel_subset.evaluate(cel_subset.compile_expression(text), env)  # noqa: E731
        self.assertIs(ev("oldObject != null && has(oldObject.metadata)", {"oldObject": None}), False)
        self.assertIs(ev("has(oldObject.metadata) && oldObject != null", {"oldObject": None}), False)
        self.assertIsInstance(ev("has(oldObject.metadata)", {"oldObject": None}), cel_subset.CelError)
        self.assertIs(ev("has(object.x) || object.y", {"object": {"x": 1}}), True)
        with self.assertRaises(cel_subset.CelSyntaxError):
            cel_subset.compile_expression("has(object)")
        with self.assertRaises(cel_subset.CelSyntaxError):
            cel_subset.compile_expression("objekt != null")


if __name__ == "__main__":
    unittest.main(verbosity=2)
