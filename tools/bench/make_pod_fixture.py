#!/usr/bin/env python3
"""Writes tests/testdata/bench/pod-15k.json: a pod as a Deployment's ReplicaSet has it
once scheduled and running — two containers with env, probes and mounts, the
projected service-account volume, status with conditions and container
statuses, and managedFields of the controller manager and the kubelet — about
15 KB of JSON, the size the reconciler's pod cache is sized for (issue 18).

The reconciler keeps ~1 KB of it (reconciler/projections.cc). Deterministic:
running it again writes the same bytes."""
import json
import os
import sys

NAME = "llm-serve-00042-6c9f7d8b5d-x7k2q"
RS = "llm-serve-00042-6c9f7d8b5d"
NS = "team-inference"
UID = "0f3c9a52-7a0e-4d4b-9a53-2a4e0c1f7b11"
RS_UID = "5d7e1c2a-3b4f-4c6d-8e9f-0a1b2c3d4e5f"
PG = "llm-serve-00042-6c9f7d8b5d-7f3a1c"


def container(name, image, port):
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/usr/bin/serve"],
        "args": ["--model=/models/llama-3-70b", "--tensor-parallel-size=8",
                 "--max-num-seqs=256", "--gpu-memory-utilization=0.92",
                 "--port=%d" % port],
        "env": [{"name": "ENV_%02d" % i, "value": "value-of-the-setting-%02d" % i}
                for i in range(30)] + [
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                           "fieldPath": "status.podIP"}}}],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": port + 1, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "16", "memory": "200Gi", "nvidia.com/gpu": "8"},
                      "requests": {"cpu": "16", "memory": "200Gi", "nvidia.com/gpu": "8"}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": port, "scheme": "HTTP"},
                           "initialDelaySeconds": 30, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "livenessProbe": {"httpGet": {"path": "/health", "port": port, "scheme": "HTTP"},
                          "initialDelaySeconds": 120, "periodSeconds": 20,
                          "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "models", "mountPath": "/models", "readOnly": True},
                         {"name": "dshm", "mountPath": "/dev/shm"},
                         {"name": "kube-api-access-8xk2p",
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def fields_v1(keys):
    return {k: {} for k in keys}


def main():
    labels = {"app": "llm-serve-00042", "pod-template-hash": "6c9f7d8b5d",
              "wasd.io/managed": "true", "team": "inference", "tier": "serving"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": NAME,
            "generateName": RS + "-",
            "namespace": NS,
            "uid": UID,
            "resourceVersion": "184467301",
            "creationTimestamp": "2026-11-30T09:12:44Z",
            "labels": labels,
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2026-11-30T09:12:00Z",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "8001",
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": RS,
                                 "uid": RS_UID, "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update",
                 "apiVersion": "v1", "time": "2026-11-30T09:12:44Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {
                     "f:metadata": {"f:generateName": {}, "f:labels": fields_v1(
                         ["." ] + ["f:" + k for k in labels]),
                         "f:annotations": fields_v1(["."] + [
                             "f:kubectl.kubernetes.io/restartedAt", "f:prometheus.io/scrape",
                             "f:prometheus.io/port"]),
                         "f:ownerReferences": {".": {}, 'k:{"uid":"%s"}' % RS_UID: {}}},
                     "f:spec": {
                         "f:containers": {'k:{"name":"%s"}' % c: {
                             ".": {}, "f:args": {}, "f:command": {}, "f:env": {
                                 ".": {}, **{'k:{"name":"ENV_%02d"}' % i: {
                                     ".": {}, "f:name": {}, "f:value": {}} for i in range(30)}},
                             "f:image": {}, "f:imagePullPolicy": {}, "f:livenessProbe": {
                                 ".": {}, "f:failureThreshold": {}, "f:httpGet": {
                                     ".": {}, "f:path": {}, "f:port": {}, "f:scheme": {}}},
                             "f:name": {}, "f:ports": {".": {}},
                             "f:resources": {".": {}, "f:limits": {}, "f:requests": {}},
                             "f:volumeMounts": {".": {}}}
                             for c in ("server", "sidecar")},
                         "f:schedulingGroup": {".": {}, "f:podGroupName": {}},
                         "f:volumes": {".": {}, 'k:{"name":"models"}': {}, 'k:{"name":"dshm"}': {}},
                     }}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-11-30T09:14:02Z", "fieldsType": "FieldsV1",
                 "subresource": "status",
                 "fieldsV1": {"f:status": {
                     "f:conditions": {'k:{"type":"%s"}' % t: {
                         ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                         "f:status": {}, "f:type": {}}
                         for t in ("ContainersReady", "Initialized", "PodReadyToStartContainers",
                                   "PodScheduled", "Ready")},
                     "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {},
                     "f:podIP": {}, "f:podIPs": {".": {}, 'k:{"ip":"10.244.3.17"}': {}},
                     "f:startTime": {}}}},
            ],
        },
        "spec": {
            "containers": [container("server", "registry.example.com/inference/vllm:v0.6.3", 8000),
                           container("sidecar", "registry.example.com/inference/proxy:1.4.2", 9000)],
            "volumes": [
                {"name": "models", "persistentVolumeClaim": {"claimName": "models-ro",
                                                             "readOnly": True}},
                {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                {"name": "kube-api-access-8xk2p", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt",
                                   "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                        "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}},
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": "gpu-node-017",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "priorityClassName": "inference-high",
            "priority": 100000,
            "schedulingGroup": {"podGroupName": PG},
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                 "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                 "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                            "lastTransitionTime": "2026-11-30T09:14:02Z"}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                     "ContainersReady", "PodScheduled")],
            "hostIP": "10.0.12.17",
            "hostIPs": [{"ip": "10.0.12.17"}],
            "podIP": "10.244.3.17",
            "podIPs": [{"ip": "10.244.3.17"}],
            "startTime": "2026-11-30T09:12:45Z",
            "containerStatuses": [{
                "name": c, "state": {"running": {"startedAt": "2026-11-30T09:13:40Z"}},
                "lastState": {}, "ready": True, "restartCount": 0,
                "image": "registry.example.com/inference/%s" % c,
                "imageID": "registry.example.com/inference/%s@sha256:%s" % (c, "9f" * 32),
                "containerID": "containerd://%s" % ("ab" * 32), "started": True,
                "volumeMounts": [{"name": "models", "mountPath": "/models", "readOnly": True,
                                  "recursiveReadOnly": "Disabled"}]}
                for c in ("server", "sidecar")],
            "qosClass": "Guaranteed",
        },
    }
    text = json.dumps(pod, separators=(",", ":"), sort_keys=False) + "\n"
    out = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "testdata", "bench", "pod-15k.json")
    with open(out, "w") as f:
        f.write(text)
    print("%s: %d bytes" % (out, len(text)), file=sys.stderr)


if __name__ == "__main__":
    main()
