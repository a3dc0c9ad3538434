package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// hostIP is every Node's address (the agent's host).
const hostIP = "127.0.0.1"

type agent struct {
	cs        kubernetes.Interface
	o         options
	apiHost   string
	apiPort   string
	repos     []string
	nodeNames map[string]bool
	alloc     v1.ResourceList
	started   metav1.Time

	queue  workqueue.TypedRateLimitingInterface[string]
	lister listersv1.PodLister

	mu   sync.Mutex
	pods map[string]*podRT // by namespace/name
	ips  map[string]string // ip -> pod UID
	wg   sync.WaitGroup    // container goroutines
}

// podRT is the agent's runtime state of one pod (one UID).
type podRT struct {
	key    string
	uid    types.UID
	ip     string
	dir    string
	pod    *v1.Pod // as first seen: the spec does not change
	start  metav1.Time
	ctx    context.Context
	cancel context.CancelFunc

	// guarded by agent.mu
	ctrs        []*ctrRT
	prepErr     string
	terminating bool
	terminated  bool // processes gone, pod deleted (or being)
}

type ctrRT struct {
	spec    v1.Container
	process bool // runs --wasd-binary; else a placeholder that is "running"

	// guarded by agent.mu
	pid       int
	running   bool
	startedAt metav1.Time
	started   bool // startup probe passed (or none)
	ready     bool
	restarts  int32
	lastTerm  *v1.ContainerStateTerminated
	curTerm   *v1.ContainerStateTerminated // set when done
	waiting   string
	waitMsg   string
	done      bool // will not run again
	stopProbe context.CancelFunc
}

func newAgent(cs kubernetes.Interface, o options, apiHost, apiPort string) *agent {
	return &agent{
		cs: cs, o: o, apiHost: apiHost, apiPort: apiPort,
		repos:     splitList(o.wasdImages),
		nodeNames: map[string]bool{},
		started:   nowSec(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			200*time.Millisecond, 10*time.Second)),
		pods: map[string]*podRT{},
		ips:  map[string]string{},
	}
}

func (a *agent) enqueue(key string) { a.queue.Add(key) }

func (a *agent) enqueueAfter(key string, d time.Duration) { a.queue.AddAfter(key, d) }

// runPods watches the pods bound to the agent's Nodes and reconciles each,
// until ctx ends.
func (a *agent) runPods(ctx context.Context) {
	factory := informers.NewSharedInformerFactoryWithOptions(a.cs, 0,
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.FieldSelector = "spec.nodeName!=" }))
	inf := factory.Core().V1().Pods()
	a.lister = inf.Lister()
	handler := func(obj any) {
		if p, ok := obj.(*v1.Pod); ok && !a.nodeNames[p.Spec.NodeName] {
			return
		}
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.enqueue(key)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handler, UpdateFunc: func(_, n any) { handler(n) }, DeleteFunc: handler,
	})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go a.runServiceProxy(ctx)
	var workers sync.WaitGroup
	for i := 0; i < 4; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				key, quit := a.queue.Get()
				if quit {
					return
				}
				if err := a.reconcile(ctx, key); err != nil {
					if ctx.Err() == nil {
						klog.Warningf("pod %s: %v", key, err)
					}
					a.queue.AddRateLimited(key)
				} else {
					a.queue.Forget(key)
				}
				a.queue.Done(key)
			}
		}()
	}
	<-ctx.Done()
	a.queue.ShutDown()
	workers.Wait()
}

func (a *agent) reconcile(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := a.lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		pod = nil
	} else if err != nil {
		return err
	}
	if pod != nil && !a.nodeNames[pod.Spec.NodeName] {
		pod = nil
	}
	a.mu.Lock()
	rt := a.pods[key]
	a.mu.Unlock()
	if rt != nil && (pod == nil || pod.UID != rt.uid) {
		// Gone, or replaced by a pod of the same name: end what ran.
		a.killNow(rt)
		a.mu.Lock()
		delete(a.pods, key)
		a.mu.Unlock()
		rt = nil
	}
	if pod == nil {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		if rt == nil {
			// Nothing runs for it (terminal, or never started here).
			return a.finishDelete(ctx, pod)
		}
		a.mu.Lock()
		first := !rt.terminating
		rt.terminating = true
		a.mu.Unlock()
		if first {
			grace := time.Duration(ptr.Deref(pod.DeletionGracePeriodSeconds, 30)) * time.Second
			go a.terminate(rt, pod, grace)
		}
		return nil
	}
	if rt == nil {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			return nil // finished before this agent started
		}
		rt, err = a.startPod(pod)
		if err != nil {
			return err
		}
	}
	return a.syncStatus(ctx, pod, rt)
}

// allocIP gives the pod a loopback address of its own: --process-ip-prefix
// 2-254 (default 127.0.0.N) for pods whose processes run here (they listen
// on it), --idle-ip-prefix x.y (default 127.1.x.y) for the rest.
func (a *agent) allocIP(uid types.UID, process bool) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if process {
		for n := 2; n < 255; n++ {
			ip := a.o.processIPPrefix + strconv.Itoa(n)
			if _, used := a.ips[ip]; !used {
				a.ips[ip] = string(uid)
				return ip, nil
			}
		}
		return "", fmt.Errorf("no free pod IP in %s2-254", a.o.processIPPrefix)
	}
	for n := 0; n < 65534; n++ {
		ip := fmt.Sprintf("%s%d.%d", a.o.idleIPPrefix, (n+1)/256, (n+1)%256)
		if (n+1)%256 == 0 || (n+1)%256 == 255 {
			continue
		}
		if _, used := a.ips[ip]; !used {
			a.ips[ip] = string(uid)
			return ip, nil
		}
	}
	return "", fmt.Errorf("no free pod IP in %s0.0/16", a.o.idleIPPrefix)
}

func (a *agent) releaseIP(ip string, uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ips[ip] == string(uid) {
		delete(a.ips, ip)
	}
}

func (a *agent) startPod(pod *v1.Pod) (*podRT, error) {
	process := false
	var ctrs []*ctrRT
	for _, c := range pod.Spec.Containers {
		p := isWasdImage(c.Image, a.repos) && a.o.wasdBinary != ""
		process = process || p
		ctrs = append(ctrs, &ctrRT{spec: c, process: p, waiting: "ContainerCreating"})
	}
	ip, err := a.allocIP(pod.UID, process)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &podRT{
		key: pod.Namespace + "/" + pod.Name, uid: pod.UID, ip: ip, pod: pod.DeepCopy(),
		dir:   filepath.Join(a.o.stateDir, "pods", pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)),
		start: nowSec(), ctx: ctx, cancel: cancel, ctrs: ctrs,
	}
	a.mu.Lock()
	a.pods[rt.key] = rt
	a.mu.Unlock()
	if !process {
		// A placeholder pod: its containers "run" at once; a pod that is not
		// restarted (Job pods) completes at once, as KWOK's pod-complete stage.
		a.mu.Lock()
		for _, c := range ctrs {
			c.waiting, c.running, c.started, c.ready, c.startedAt = "", true, true, true, rt.start
			if pod.Spec.RestartPolicy == v1.RestartPolicyNever || pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure {
				c.running, c.ready, c.done = false, false, true
				c.curTerm = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: rt.start,
					FinishedAt: nowSec()}
			}
		}
		a.mu.Unlock()
		return rt, nil
	}
	klog.Infof("pod %s (%s): ip %s, running its wasd containers", rt.key, pod.UID, ip)
	a.wg.Add(1)
	go a.runPodProcesses(rt)
	return rt, nil
}

// runPodProcesses writes the volumes (retrying while a Secret or ConfigMap
// is missing, as the kubelet's ContainerCreating) and starts one goroutine
// per container.
func (a *agent) runPodProcesses(rt *podRT) {
	defer a.wg.Done()
	var mounts map[string]string
	var refresh time.Duration
	for attempt := 0; ; attempt++ {
		var err error
		mounts, refresh, err = a.writeVolumes(rt.ctx, rt)
		if err == nil {
			break
		}
		a.mu.Lock()
		rt.prepErr = err.Error()
		a.mu.Unlock()
		a.enqueue(rt.key)
		klog.Warningf("pod %s: volumes: %v", rt.key, err)
		select {
		case <-rt.ctx.Done():
			return
		case <-time.After(time.Duration(min(attempt+1, 5)) * time.Second):
		}
	}
	a.mu.Lock()
	rt.prepErr = ""
	a.mu.Unlock()
	if refresh > 0 { // projected tokens: rewritten at 80% of their life, as the kubelet does
		a.every(rt, refresh, "refreshing volumes", func() error {
			_, _, err := a.writeVolumes(rt.ctx, rt)
			return err
		})
	}
	if a.o.volumeSync > 0 && hasObjectVolumes(rt.pod) { // Secret/ConfigMap volumes kept in sync, as the kubelet does
		a.every(rt, a.o.volumeSync, "syncing volumes", func() error { return a.syncObjectVolumes(rt.ctx, rt) })
	}
	for _, c := range rt.ctrs {
		if !c.process {
			a.mu.Lock()
			c.waiting, c.running, c.started, c.ready, c.startedAt = "", true, true, true, nowSec()
			a.mu.Unlock()
			continue
		}
		a.wg.Add(1)
		go a.runContainer(rt, c, mounts)
	}
	a.enqueue(rt.key)
}

// runContainer starts the container's process and restarts it per the pod's
// restartPolicy, with a back-off capped at --max-backoff, at most
// --max-restarts times.
func (a *agent) runContainer(rt *podRT, c *ctrRT, mounts map[string]string) {
	defer a.wg.Done()
	backoff := time.Second
	for {
		if rt.ctx.Err() != nil {
			return
		}
		a.mu.Lock()
		stopping := rt.terminating
		a.mu.Unlock()
		if stopping {
			return
		}
		ranFor, exit, reason := a.runOnce(rt, c, mounts)
		a.mu.Lock()
		c.running, c.ready, c.pid = false, false, 0
		term := &v1.ContainerStateTerminated{ExitCode: int32(exit), Reason: reason, StartedAt: c.startedAt,
			FinishedAt: nowSec()}
		policy := rt.pod.Spec.RestartPolicy
		restart := policy == v1.RestartPolicyAlways || policy == "" ||
			(policy == v1.RestartPolicyOnFailure && exit != 0)
		if rt.terminating || rt.ctx.Err() != nil {
			restart = false
		}
		if !restart {
			c.done, c.curTerm = true, term
		} else {
			c.lastTerm = term
			if int(c.restarts) >= a.o.maxRestarts {
				c.waiting, c.waitMsg = "CrashLoopBackOff", "restarted --max-restarts times; not again"
				a.mu.Unlock()
				a.enqueue(rt.key)
				return
			}
			c.waiting, c.waitMsg = "CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container", backoff)
		}
		a.mu.Unlock()
		a.enqueue(rt.key)
		if !restart {
			return
		}
		if ranFor > 10*time.Minute {
			backoff = time.Second
		}
		select {
		case <-rt.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, a.o.maxBackoff)
		a.mu.Lock()
		c.restarts++
		a.mu.Unlock()
	}
}

func (a *agent) logPath(rt *podRT, c *ctrRT) string {
	return filepath.Join(a.o.stateDir, "logs", rt.pod.Namespace+"_"+rt.pod.Name+"_"+c.spec.Name+".log")
}

// runOnce runs the process until it exits: returns how long it ran, its exit
// code and the termination reason.
func (a *agent) runOnce(rt *podRT, c *ctrRT, mounts map[string]string) (time.Duration, int, string) {
	logf, err := os.OpenFile(a.logPath(rt, c), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		klog.Errorf("pod %s: log: %v", rt.key, err)
		return 0, 128, "StartError"
	}
	defer logf.Close()
	fail := func(msg string) (time.Duration, int, string) {
		fmt.Fprintf(logf, "=== nodeagent: cannot start: %s\n", msg)
		klog.Warningf("pod %s container %s: %s", rt.key, c.spec.Name, msg)
		return 0, 128, "StartError"
	}
	spec, err := a.execSpec(rt, c, mounts)
	if err != nil {
		return fail(err.Error())
	}
	fmt.Fprintf(logf, "=== nodeagent: %s start (restart %d): %q\n", time.Now().Format(time.RFC3339Nano), c.restarts,
		spec.Argv)
	cmd, err := a.startProcess(spec, logf)
	if err != nil {
		return fail(err.Error())
	}
	pidFile := filepath.Join(a.o.stateDir, "pids", string(rt.uid)+"_"+c.spec.Name)
	_ = os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	probeCtx, stopProbe := context.WithCancel(rt.ctx)
	a.mu.Lock()
	c.pid, c.running, c.startedAt, c.waiting, c.waitMsg = cmd.Process.Pid, true, nowSec(), "", ""
	c.started, c.ready, c.stopProbe = c.spec.StartupProbe == nil, false, stopProbe
	a.mu.Unlock()
	a.enqueue(rt.key)
	a.startProbes(probeCtx, rt, c, cmd.Process.Pid)
	t0 := time.Now()
	err = cmd.Wait()
	runtime.UnlockOSThread()
	stopProbe()
	_ = os.Remove(pidFile)
	exit := 0
	reason := "Completed"
	if err != nil {
		exit, reason = 1, "Error"
		if ee, ok := err.(interface{ Sys() any }); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
				switch {
				case ws.Exited():
					exit = ws.ExitStatus()
				case ws.Signaled():
					exit = 128 + int(ws.Signal())
				}
			}
		}
	}
	fmt.Fprintf(logf, "=== nodeagent: %s exited %d (%s)\n", time.Now().Format(time.RFC3339Nano), exit, reason)
	return time.Since(t0), exit, reason
}

// terminate is the kubelet's graceful delete: SIGTERM, the grace period,
// SIGKILL; then the pod is deleted for good (grace 0).
func (a *agent) terminate(rt *podRT, pod *v1.Pod, grace time.Duration) {
	pids := a.pids(rt)
	if len(pids) == 0 {
		// No process: a placeholder pod ends after its grace period
		// (capped by --idle-grace-cap).
		wait := grace
		if a.o.idleGraceCap >= 0 && a.o.idleGraceCap < wait {
			wait = a.o.idleGraceCap
		}
		select {
		case <-time.After(wait):
		case <-rt.ctx.Done():
		}
	} else {
		klog.Infof("pod %s: SIGTERM to %v, grace %s", rt.key, pids, grace)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) && len(a.pids(rt)) > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if left := a.pids(rt); len(left) > 0 {
			klog.Infof("pod %s: grace period over, SIGKILL to %v", rt.key, left)
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			for i := 0; i < 100 && len(a.pids(rt)) > 0; i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	rt.cancel()
	a.mu.Lock()
	rt.terminated = true
	a.mu.Unlock()
	a.releaseIP(rt.ip, rt.uid)
	if err := a.finishDelete(context.Background(), pod); err != nil {
		klog.Warningf("pod %s: delete: %v", rt.key, err)
		a.enqueueAfter(rt.key, time.Second)
	}
}

// finishDelete removes the pod object once nothing runs for it.
func (a *agent) finishDelete(ctx context.Context, pod *v1.Pod) error {
	err := a.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: ptr.To(pod.UID)},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (a *agent) pids(rt *podRT) []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []int
	for _, c := range rt.ctrs {
		if c.running && c.pid > 0 {
			out = append(out, c.pid)
		}
	}
	return out
}

// killNow ends a pod's processes at once (the pod object is gone).
func (a *agent) killNow(rt *podRT) {
	a.mu.Lock()
	rt.terminating = true
	a.mu.Unlock()
	for _, pid := range a.pids(rt) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	rt.cancel()
	a.releaseIP(rt.ip, rt.uid)
}

// shutdown ends every process: SIGTERM, 5 s, SIGKILL.
func (a *agent) shutdown() {
	a.mu.Lock()
	var all []*podRT
	for _, rt := range a.pods {
		rt.terminating = true
		all = append(all, rt)
	}
	a.mu.Unlock()
	for _, rt := range all {
		for _, pid := range a.pids(rt) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n := 0
		for _, rt := range all {
			n += len(a.pids(rt))
		}
		if n == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, rt := range all {
		for _, pid := range a.pids(rt) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		rt.cancel()
	}
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// syncStatus writes the pod's status from the runtime state when it differs.
func (a *agent) syncStatus(ctx context.Context, pod *v1.Pod, rt *podRT) error {
	want := a.buildStatus(pod, rt)
	if equality.Semantic.DeepEqual(pod.Status, want) {
		return nil
	}
	np := pod.DeepCopy()
	np.Status = want
	_, err := a.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, np, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		a.enqueueAfter(rt.key, 100*time.Millisecond)
		return nil
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (a *agent) buildStatus(pod *v1.Pod, rt *podRT) v1.PodStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := *pod.Status.DeepCopy()
	st.HostIP = hostIP
	st.HostIPs = []v1.HostIP{{IP: hostIP}}
	st.PodIP = rt.ip
	st.PodIPs = []v1.PodIP{{IP: rt.ip}}
	if st.StartTime == nil {
		st.StartTime = ptr.To(rt.start)
	}
	allReady, anyRunning, allDone, anyFailed := true, false, true, false
	var statuses []v1.ContainerStatus
	for _, c := range rt.ctrs {
		cs := v1.ContainerStatus{
			Name: c.spec.Name, Image: c.spec.Image, ImageID: "wasd-nodeagent://" + c.spec.Image,
			Ready: c.ready, Started: ptr.To(c.running && c.started), RestartCount: c.restarts,
			LastTerminationState: v1.ContainerState{Terminated: c.lastTerm},
		}
		if c.running {
			cs.ContainerID = fmt.Sprintf("wasd-nodeagent://%s/%s/%d", rt.uid, c.spec.Name, c.pid)
		}
		switch {
		case c.running:
			cs.State.Running = &v1.ContainerStateRunning{StartedAt: c.startedAt}
		case c.done && c.curTerm != nil:
			cs.State.Terminated = c.curTerm
		default:
			reason, msg := c.waiting, c.waitMsg
			if rt.prepErr != "" {
				reason, msg = "ContainerCreating", rt.prepErr
			}
			if reason == "" {
				reason = "ContainerCreating"
			}
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: reason, Message: msg}
		}
		// keep the transition times of an unchanged state
		for _, old := range pod.Status.ContainerStatuses {
			if old.Name == cs.Name && equality.Semantic.DeepEqual(old.State, cs.State) {
				cs.State = old.State
			}
		}
		allReady = allReady && c.ready
		anyRunning = anyRunning || c.running
		allDone = allDone && c.done
		anyFailed = anyFailed || (c.done && c.curTerm != nil && c.curTerm.ExitCode != 0)
		statuses = append(statuses, cs)
	}
	st.ContainerStatuses = statuses
	switch {
	case allDone && anyFailed:
		st.Phase = v1.PodFailed
	case allDone:
		st.Phase = v1.PodSucceeded
	case anyRunning || anyStarted(rt):
		st.Phase = v1.PodRunning
	default:
		st.Phase = v1.PodPending
	}
	for _, g := range pod.Spec.ReadinessGates {
		ok := false
		for _, pc := range pod.Status.Conditions {
			if pc.Type == g.ConditionType && pc.Status == v1.ConditionTrue {
				ok = true
			}
		}
		allReady = allReady && ok
	}
	terminal := st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed
	cond := func(b bool) v1.ConditionStatus {
		if b {
			return v1.ConditionTrue
		}
		return v1.ConditionFalse
	}
	setCondition(&st, v1.PodReadyToStartContainers, cond(rt.prepErr == "" && !terminal), "")
	setCondition(&st, v1.PodInitialized, v1.ConditionTrue, "")
	ready := allReady && !terminal && !rt.terminating
	reason := ""
	if !ready {
		reason = "ContainersNotReady"
		if terminal {
			reason = "PodCompleted"
		}
	}
	setCondition(&st, v1.ContainersReady, cond(ready), reason)
	setCondition(&st, v1.PodReady, cond(ready), reason)
	if st.QOSClass == "" {
		st.QOSClass = v1.PodQOSBestEffort
	}
	return st
}

func anyStarted(rt *podRT) bool {
	for _, c := range rt.ctrs {
		if c.restarts > 0 || c.lastTerm != nil || c.done {
			return true
		}
	}
	return false
}

func setCondition(st *v1.PodStatus, t v1.PodConditionType, s v1.ConditionStatus, reason string) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			if st.Conditions[i].Status != s {
				st.Conditions[i].Status = s
				st.Conditions[i].LastTransitionTime = nowSec()
			}
			st.Conditions[i].Reason = reason
			return
		}
	}
	st.Conditions = append(st.Conditions, v1.PodCondition{Type: t, Status: s, Reason: reason,
		LastTransitionTime: nowSec()})
}

// nowSec is the time at the API's resolution (whole seconds), so a status
// written and read back compares equal.
func nowSec() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// every runs fn each period until the pod's context ends, logging its errors
// as "pod KEY: WHAT: ERR".
func (a *agent) every(rt *podRT, period time.Duration, what string, fn func() error) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-rt.ctx.Done():
				return
			case <-t.C:
				if err := fn(); err != nil && rt.ctx.Err() == nil {
					klog.Warningf("pod %s: %s: %v", rt.key, what, err)
				}
			}
		}
	}()
}
