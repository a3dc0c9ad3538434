package main

import (
	"context"
	"fmt"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const leaseNamespace = "kube-node-lease"

func (a *agent) nodeName(i int) string { return fmt.Sprintf("%s%d", a.o.nodePrefix, i) }

func (a *agent) capacity() (v1.ResourceList, error) {
	rl := v1.ResourceList{}
	for name, val := range map[v1.ResourceName]string{
		v1.ResourceCPU: a.o.cpu, v1.ResourceMemory: a.o.memory, v1.ResourcePods: a.o.pods,
		v1.ResourceEphemeralStorage: "100Gi", "nvidia.com/gpu": a.o.gpus,
	} {
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, val, err)
		}
		if name == "nvidia.com/gpu" && q.IsZero() {
			continue
		}
		rl[name] = q
	}
	return rl, nil
}

func (a *agent) nodeConditions(now metav1.Time) []v1.NodeCondition {
	c := func(t v1.NodeConditionType, s v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: a.started}
	}
	return []v1.NodeCondition{
		c(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "wasd node agent"),
		c(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "wasd node agent"),
		c(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "wasd node agent"),
		c(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "wasd node agent is posting ready status"),
	}
}

func (a *agent) nodeStatus(name string, capacity v1.ResourceList) v1.NodeStatus {
	return v1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       v1.NodeRunning,
		Conditions:  a.nodeConditions(metav1.Now()),
		Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: hostIP},
			{Type: v1.NodeHostName, Address: name},
		},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: a.o.kubeletPort}},
		NodeInfo: v1.NodeSystemInfo{
			KubeletVersion:          "v1.37.2",
			OperatingSystem:         "linux",
			Architecture:            "amd64",
			ContainerRuntimeVersion: "wasd-nodeagent://1",
			OSImage:                 "wasd node agent",
		},
	}
}

// registerNodes creates (or adopts) the Nodes, Ready, without taints.
func (a *agent) registerNodes(ctx context.Context) error {
	capacity, err := a.capacity()
	if err != nil {
		return err
	}
	a.alloc = capacity
	zones := splitList(a.o.zones)
	for i := 1; i <= a.o.nodes; i++ {
		name := a.nodeName(i)
		a.nodeNames[name] = true
		labels := map[string]string{
			"kubernetes.io/hostname":  name,
			"kubernetes.io/os":        "linux",
			"kubernetes.io/arch":      "amd64",
			"wasd.io/test-node-agent": "true",
			"node.kubernetes.io/exclude-from-external-load-balancers": "true",
		}
		if len(zones) > 0 {
			labels["topology.kubernetes.io/zone"] = zones[(i-1)%len(zones)]
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status:     a.nodeStatus(name, capacity),
		}
		var got *v1.Node
		for attempt := 0; attempt < 30; attempt++ {
			got, err = a.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				got, err = a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			}
			if err == nil {
				break
			}
			klog.Warningf("node %s: %v (retrying)", name, err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
		if err != nil {
			return err
		}
		// TaintNodesByCondition adds node.kubernetes.io/not-ready on create
		// when it is enabled; the node lifecycle controller that would lift
		// it does not run here.
		var keep []v1.Taint
		for _, t := range got.Spec.Taints {
			if t.Key != v1.TaintNodeNotReady && t.Key != v1.TaintNodeUnreachable {
				keep = append(keep, t)
			}
		}
		if len(keep) != len(got.Spec.Taints) || !sameLabels(got.Labels, labels) {
			got.Spec.Taints = keep
			for k, v := range labels {
				if got.Labels == nil {
					got.Labels = map[string]string{}
				}
				got.Labels[k] = v
			}
			if got, err = a.cs.CoreV1().Nodes().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("node %s: %w", name, err)
			}
		}
		// The create may not keep status: write it through the subresource.
		got.Status = a.nodeStatus(name, capacity)
		if _, err := a.cs.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", name, err)
		}
		if err := a.renewLease(ctx, name); err != nil {
			klog.Warningf("lease %s: %v", name, err)
		}
	}
	return nil
}

func sameLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func (a *agent) renewLease(ctx context.Context, name string) error {
	now := metav1.NewMicroTime(time.Now())
	leases := a.cs.CoordinationV1().Leases(leaseNamespace)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: leaseNamespace},
			Spec: coordv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(40)),
				RenewTime: &now},
		}
		if node, err := a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID}}
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// heartbeatLoop renews the Leases and refreshes the Ready condition, until
// ctx ends.
func (a *agent) heartbeatLoop(ctx context.Context) {
	lease := time.NewTicker(a.o.heartbeat)
	status := time.NewTicker(a.o.statusRefresh)
	defer lease.Stop()
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C:
			for name := range a.nodeNames {
				if err := a.renewLease(ctx, name); err != nil && ctx.Err() == nil {
					klog.Warningf("lease %s: %v", name, err)
				}
			}
		case <-status.C:
			for name := range a.nodeNames {
				node, err := a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					continue
				}
				node.Status.Conditions = a.nodeConditions(metav1.Now())
				if _, err := a.cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil &&
					ctx.Err() == nil {
					klog.Warningf("node %s status: %v", name, err)
				}
			}
		}
	}
}
