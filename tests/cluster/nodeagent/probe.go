package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
)

// startProbes runs the container's startup, readiness and liveness probes
// as the kubelet does: readiness and liveness only once startup passed;
// readiness sets Ready; liveness (and startup) failures end the process
// (SIGTERM), which then restarts per restartPolicy. Without a readiness
// probe a started container is Ready.
func (a *agent) startProbes(ctx context.Context, rt *podRT, c *ctrRT, pid int) {
	spec := c.spec
	go func() {
		if spec.StartupProbe != nil {
			if !a.probeUntil(ctx, rt, c, spec.StartupProbe, true) {
				if ctx.Err() == nil {
					klog.Infof("pod %s container %s: startup probe failed, restarting", rt.key, spec.Name)
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
				return
			}
			a.mu.Lock()
			c.started = true
			a.mu.Unlock()
			a.enqueue(rt.key)
		}
		if spec.ReadinessProbe == nil {
			a.mu.Lock()
			c.ready = true
			a.mu.Unlock()
			a.enqueue(rt.key)
		} else {
			go a.readinessLoop(ctx, rt, c, spec.ReadinessProbe)
		}
		if spec.LivenessProbe != nil {
			go func() {
				if !a.probeUntil(ctx, rt, c, spec.LivenessProbe, false) && ctx.Err() == nil {
					klog.Infof("pod %s container %s: liveness probe failed, restarting", rt.key, spec.Name)
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
			}()
		}
	}()
}

type probeTiming struct {
	delay, period, timeout time.Duration
	success, failure       int
}

func timing(p *v1.Probe) probeTiming {
	t := probeTiming{
		delay:   time.Duration(p.InitialDelaySeconds) * time.Second,
		period:  time.Duration(p.PeriodSeconds) * time.Second,
		timeout: time.Duration(p.TimeoutSeconds) * time.Second,
		success: int(p.SuccessThreshold), failure: int(p.FailureThreshold),
	}
	if t.period <= 0 {
		t.period = 10 * time.Second
	}
	if t.timeout <= 0 {
		t.timeout = time.Second
	}
	if t.success <= 0 {
		t.success = 1
	}
	if t.failure <= 0 {
		t.failure = 3
	}
	return t
}

// probeUntil probes until the probe succeeds (untilSuccess: startup) or
// fails failureThreshold times in a row (liveness: returns false then).
func (a *agent) probeUntil(ctx context.Context, rt *podRT, c *ctrRT, p *v1.Probe, untilSuccess bool) bool {
	t := timing(p)
	if !sleepCtx(ctx, t.delay) {
		return true
	}
	fails := 0
	for {
		err := a.probeOnce(ctx, rt, c, p, t.timeout)
		if err == nil {
			fails = 0
			if untilSuccess {
				return true
			}
		} else {
			fails++
			if fails >= t.failure {
				klog.Infof("pod %s container %s: probe failed %d times: %v", rt.key, c.spec.Name, fails, err)
				return false
			}
		}
		if !sleepCtx(ctx, t.period) {
			return true
		}
	}
}

func (a *agent) readinessLoop(ctx context.Context, rt *podRT, c *ctrRT, p *v1.Probe) {
	t := timing(p)
	if !sleepCtx(ctx, t.delay) {
		return
	}
	ok, bad := 0, 0
	for {
		err := a.probeOnce(ctx, rt, c, p, t.timeout)
		if ctx.Err() != nil {
			return
		}
		a.mu.Lock()
		was := c.ready
		if err == nil {
			ok, bad = ok+1, 0
			if ok >= t.success {
				c.ready = true
			}
		} else {
			ok, bad = 0, bad+1
			if bad >= t.failure {
				c.ready = false
			}
		}
		now := c.ready
		a.mu.Unlock()
		if was != now {
			klog.Infof("pod %s container %s: ready=%t", rt.key, c.spec.Name, now)
			a.enqueue(rt.key)
		}
		if !sleepCtx(ctx, t.period) {
			return
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func resolvePort(c *v1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("no container port named %q", port.StrVal)
}

// probeOnce: httpGet (HTTP or HTTPS without verification, as the kubelet)
// and tcpSocket against the pod IP; exec and grpc probes are not run here
// and count as passed.
func (a *agent) probeOnce(ctx context.Context, rt *podRT, c *ctrRT, p *v1.Probe, timeout time.Duration) error {
	switch {
	case p.HTTPGet != nil:
		port, err := resolvePort(&c.spec, p.HTTPGet.Port)
		if err != nil {
			return err
		}
		host := p.HTTPGet.Host
		if host == "" {
			host = rt.ip
		}
		scheme := "http"
		if p.HTTPGet.Scheme == v1.URISchemeHTTPS {
			scheme = "https"
		}
		path := p.HTTPGet.Path
		if path == "" || path[0] != '/' {
			path = "/" + path
		}
		u := scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "kube-probe/1.37")
		for _, h := range p.HTTPGet.HTTPHeaders {
			req.Header.Set(h.Name, h.Value)
		}
		client := &http.Client{Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet's prober
			DisableKeepAlives: true,
		}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
		}
		return nil
	case p.TCPSocket != nil:
		port, err := resolvePort(&c.spec, p.TCPSocket.Port)
		if err != nil {
			return err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = rt.ip
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), timeout)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return nil
}
