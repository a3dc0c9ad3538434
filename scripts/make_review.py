#!/usr/bin/env python3
"""Wraps a Kubernetes manifest into an AdmissionReview v1 request, the way
kube-apiserver sends it to a webhook: the object carries the defaults the API
server applies before admission (replicas 1, strategy RollingUpdate 25%/25%,
namespace default, uid, creationTimestamp, generation), plus userInfo,
options and dryRun.

Usage: make_review.py MANIFEST [--operation CREATE|UPDATE] [--old OLD_MANIFEST]
Prints the review as JSON on stdout (the first Deployment or Pod in the file).
"""
import argparse
import json
import sys
import uuid

import yaml


def defaulted(obj):
    obj = json.loads(json.dumps(obj))
    meta = obj.setdefault("metadata", {})
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", str(uuid.uuid4()))
    meta.setdefault("creationTimestamp", "2026-11-29T12:00:00Z")
    meta.setdefault("generation", 1)
    if obj.get("kind") == "Deployment":
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    return obj


def first_object(path):
    with open(path, encoding="utf-8") as f:
        for doc in yaml.safe_load_all(f):
            if isinstance(doc, dict) and doc.get("kind") in ("Deployment", "Pod"):
                return doc
    sys.exit(f"{path}: no Deployment or Pod found")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest")
    ap.add_argument("--operation", default="CREATE", choices=["CREATE", "UPDATE"])
    ap.add_argument("--old", help="manifest of the old object (UPDATE)")
    args = ap.parse_args()
    obj = defaulted(first_object(args.manifest))
    is_pod = obj["kind"] == "Pod"
    group, resource = ("", "pods") if is_pod else ("apps", "deployments")
    old = None
    if args.operation == "UPDATE":
        old = defaulted(first_object(args.old or args.manifest))
        old["metadata"]["uid"] = obj["metadata"]["uid"]
    options_kind = "CreateOptions" if args.operation == "CREATE" else "UpdateOptions"
    gvk = {"group": group, "version": "v1", "kind": obj["kind"]}
    gvr = {"group": group, "version": "v1", "resource": resource}
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "name": obj["metadata"].get("name", ""),
            "namespace": obj["metadata"]["namespace"],
            "operation": args.operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": options_kind, "fieldManager": "kubectl-client-side-apply"},
        },
    }
    json.dump(review, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
