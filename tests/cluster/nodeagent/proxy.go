package main

// A userspace service proxy, in place of kube-proxy: the API server calls a
// webhook's `service:` at the Service's ClusterIP (the service CIDR of
// scripts/cluster.sh is loopback, 127.96.0.0/16), and this forwards each TCP
// connection to a Ready pod of the Service. kube-apiserver's
// --enable-aggregator-routing would pick an EndpointSlice address instead,
// but EndpointSlice validation refuses loopback addresses ("may not be in the
// loopback range"), so the endpointslice controller cannot publish the pods'
// 127.0.0.N addresses.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

type svcProxy struct {
	a         *agent
	mu        sync.Mutex
	listeners map[string]*svcListener // "ip:port" -> listener
}

type svcListener struct {
	ln       net.Listener
	ns, name string
	port     v1.ServicePort
	selector map[string]string
}

func (a *agent) runServiceProxy(ctx context.Context) {
	p := &svcProxy{a: a, listeners: map[string]*svcListener{}}
	factory := informers.NewSharedInformerFactory(a.cs, 0)
	inf := factory.Core().V1().Services().Informer()
	sync := func(obj any) {
		if s, ok := obj.(*v1.Service); ok {
			p.syncService(s, false)
		} else if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			if s, ok := t.Obj.(*v1.Service); ok {
				p.syncService(s, true)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sync,
		UpdateFunc: func(_, n any) { sync(n) },
		DeleteFunc: func(obj any) {
			if s, ok := obj.(*v1.Service); ok {
				p.syncService(s, true)
			} else {
				sync(obj)
			}
		},
	})
	factory.Start(ctx.Done())
	<-ctx.Done()
	p.mu.Lock()
	for k, l := range p.listeners {
		_ = l.ln.Close()
		delete(p.listeners, k)
	}
	p.mu.Unlock()
}

func (p *svcProxy) syncService(s *v1.Service, deleted bool) {
	want := map[string]v1.ServicePort{}
	ip := net.ParseIP(s.Spec.ClusterIP)
	if !deleted && ip != nil && ip.IsLoopback() && len(s.Spec.Selector) > 0 {
		for _, port := range s.Spec.Ports {
			if port.Protocol == "" || port.Protocol == v1.ProtocolTCP {
				want[net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(port.Port)))] = port
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		if l.ns != s.Namespace || l.name != s.Name {
			continue
		}
		if port, ok := want[addr]; ok {
			l.port, l.selector = port, s.Spec.Selector
			delete(want, addr)
			continue
		}
		_ = l.ln.Close()
		delete(p.listeners, addr)
	}
	for addr, port := range want {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			klog.Warningf("service %s/%s: listen %s: %v", s.Namespace, s.Name, addr, err)
			continue
		}
		l := &svcListener{ln: ln, ns: s.Namespace, name: s.Name, port: port, selector: s.Spec.Selector}
		p.listeners[addr] = l
		klog.Infof("service %s/%s: proxying %s", s.Namespace, s.Name, addr)
		go p.serve(l)
	}
}

func (p *svcProxy) serve(l *svcListener) {
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.forward(l, conn)
	}
}

// endpoint picks a Ready, not terminating pod of the Service at random, and
// the pod's port for the Service port's targetPort.
func (p *svcProxy) endpoint(l *svcListener) (string, error) {
	p.mu.Lock()
	sel, port := labels.SelectorFromSet(l.selector), l.port
	p.mu.Unlock()
	pods, err := p.a.lister.Pods(l.ns).List(sel)
	if err != nil {
		return "", err
	}
	var addrs []string
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.PodIP == "" || !podReady(pod) {
			continue
		}
		target, ok := targetPort(pod, port)
		if ok {
			addrs = append(addrs, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(target)))
		}
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("no ready endpoints")
	}
	return addrs[rand.IntN(len(addrs))], nil
}

func podReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func targetPort(pod *v1.Pod, sp v1.ServicePort) (int, bool) {
	tp := sp.TargetPort
	if tp.IntValue() > 0 {
		return tp.IntValue(), true
	}
	if tp.StrVal == "" {
		return int(sp.Port), true
	}
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == tp.StrVal && (cp.Protocol == "" || cp.Protocol == v1.ProtocolTCP) {
				return int(cp.ContainerPort), true
			}
		}
	}
	return 0, false
}

func (p *svcProxy) forward(l *svcListener, in net.Conn) {
	defer in.Close()
	addr, err := p.endpoint(l)
	if err != nil {
		klog.V(2).Infof("service %s/%s: %v", l.ns, l.name, err)
		return
	}
	out, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		klog.V(2).Infof("service %s/%s: dial %s: %v", l.ns, l.name, addr, err)
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(out, in)
	go cp(in, out)
	<-done
	<-done
}
