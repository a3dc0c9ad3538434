"""The admission requests of the webhook-scope tests: Deployments that must
and must not reach wasd's Deployment webhooks, with the answer expected of
the chart's matchConditions (tests/cluster/test_match_conditions_real.py sends
them through the real kube-apiserver; tests/chart/test_match_conditions.py
checks the rendered conditions).
"""
import copy

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
