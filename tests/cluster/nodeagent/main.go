// Command nodeagent stands in for the kubelet on wasd's loopback control
// plane (scripts/cluster.sh): it registers Nodes, keeps them Ready, runs the
// containers of the wasd image as local processes and marks every other pod
// Running. README.md beside this file lists what a kubelet does that it does
// not.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

type options struct {
	kubeconfig      string
	nodes           int
	nodePrefix      string
	zones           string
	cpu             string
	memory          string
	pods            string
	gpus            string
	wasdImages      string
	wasdBinary      string
	tagBinaries     string
	byTag           map[string]string
	entrypoint      string
	stateDir        string
	maxBackoff      time.Duration
	maxRestarts     int
	idleGraceCap    time.Duration
	heartbeat       time.Duration
	kubeletAddr     string
	tlsCert         string
	tlsKey          string
	kubeletPort     int32
	processIPPrefix string
	idleIPPrefix    string
	statusRefresh   time.Duration
	volumeSync      time.Duration
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "mount-exec" {
		os.Exit(mountExec(os.Args[2:]))
	}
	var o options
	fs := flag.NewFlagSet("nodeagent", flag.ExitOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the API server")
	fs.IntVar(&o.nodes, "nodes", 3, "how many Nodes to register")
	fs.StringVar(&o.nodePrefix, "node-prefix", "node-", "Node names: PREFIX1, PREFIX2, ...")
	fs.StringVar(&o.zones, "zones", "zone-a,zone-b,zone-c", "topology.kubernetes.io/zone of the Nodes, round robin")
	fs.StringVar(&o.cpu, "cpu", "16", "cpu capacity of each Node")
	fs.StringVar(&o.memory, "memory", "64Gi", "memory capacity of each Node")
	fs.StringVar(&o.pods, "pods", "110", "pods capacity of each Node")
	fs.StringVar(&o.gpus, "gpus", "8", "nvidia.com/gpu capacity of each Node (0: none)")
	fs.StringVar(&o.wasdImages, "wasd-image", "ghcr.io/wasd-io/wasd", "image repository (comma list) whose containers run as processes of --wasd-binary")
	fs.StringVar(&o.wasdBinary, "wasd-binary", "", "the local wasd binary that stands for the image's /wasd")
	fs.StringVar(&o.tagBinaries, "wasd-binary-for-tag", "", "TAG=PATH,...: the binary for a wasd image of that tag instead of --wasd-binary (an older release's)")
	fs.StringVar(&o.entrypoint, "entrypoint", "/wasd", "the image's entrypoint, mapped to --wasd-binary")
	fs.StringVar(&o.stateDir, "state-dir", "/tmp/wasd-cluster/agent", "pod volumes, logs and process PIDs")
	fs.DurationVar(&o.maxBackoff, "max-backoff", 20*time.Second, "cap of the restart back-off (the kubelet's is 5m)")
	fs.IntVar(&o.maxRestarts, "max-restarts", 30, "restarts of one container after which it stays in CrashLoopBackOff")
	fs.DurationVar(&o.idleGraceCap, "idle-grace-cap", -1, "pods without a process finish a graceful delete after min(grace period, this); negative: the whole grace period")
	fs.DurationVar(&o.heartbeat, "heartbeat", 10*time.Second, "Node Lease renew period")
	fs.DurationVar(&o.statusRefresh, "status-refresh", time.Minute, "Node status (Ready heartbeat) refresh period")
	fs.DurationVar(&o.volumeSync, "volume-sync", 10*time.Second, "period of rewriting Secret and ConfigMap volumes whose object changed, as the kubelet's sync does (0: written once)")
	fs.StringVar(&o.kubeletAddr, "kubelet-address", "", "ADDR:PORT (loopback) for the /containerLogs endpoint, published as every Node's kubelet port; empty: none")
	fs.StringVar(&o.tlsCert, "tls-cert-file", "", "serving certificate of --kubelet-address")
	fs.StringVar(&o.tlsKey, "tls-key-file", "", "its key")
	fs.StringVar(&o.processIPPrefix, "process-ip-prefix", "127.0.0.", "pod IPs of pods with processes: PREFIX2 ... PREFIX254 (loopback)")
	fs.StringVar(&o.idleIPPrefix, "idle-ip-prefix", "127.1.", "pod IPs of the other pods: PREFIXx.y (loopback)")
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if o.wasdBinary != "" {
		abs, err := filepath.Abs(o.wasdBinary)
		if err == nil {
			o.wasdBinary = abs
		}
		if _, err := os.Stat(o.wasdBinary); err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent: --wasd-binary: %v\n", err)
			os.Exit(2)
		}
	}
	byTag, err := parseTagBinaries(o.tagBinaries)
	if err == nil {
		for _, b := range byTag {
			if _, err = os.Stat(b); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent: %v\n", err)
		os.Exit(2)
	}
	o.byTag = byTag
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent: %v\n", err)
		os.Exit(2)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "wasd-nodeagent"
	u, err := url.Parse(cfg.Host)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent: server %q: %v\n", cfg.Host, err)
		os.Exit(2)
	}
	apiHost, apiPort, err := net.SplitHostPort(u.Host)
	if err != nil {
		apiHost, apiPort = u.Host, "443"
	}
	for _, pre := range []string{o.processIPPrefix + "2", o.idleIPPrefix + "0.1"} {
		if ip := net.ParseIP(pre); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(os.Stderr, "nodeagent: pod IPs must be loopback addresses, not %s\n", pre)
			os.Exit(2)
		}
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	for _, d := range []string{"pods", "logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(o.stateDir, d), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent: %v\n", err)
			os.Exit(1)
		}
	}
	var logLn net.Listener
	var logCert tls.Certificate
	if o.kubeletAddr != "" {
		if logCert, err = tls.LoadX509KeyPair(o.tlsCert, o.tlsKey); err == nil {
			logLn, err = net.Listen("tcp", o.kubeletAddr)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent: --kubelet-address: %v\n", err)
			os.Exit(1)
		}
		o.kubeletPort = int32(logLn.Addr().(*net.TCPAddr).Port)
	}
	a := newAgent(cs, o, apiHost, apiPort)
	if logLn != nil {
		go a.serveLogs(ctx, logLn, logCert)
	}
	if err := a.registerNodes(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent: registering nodes: %v\n", err)
		os.Exit(1)
	}
	klog.Infof("registered %d nodes (%s1..%s%d); wasd image %s -> %s", o.nodes, o.nodePrefix, o.nodePrefix, o.nodes,
		o.wasdImages, o.wasdBinary)
	go a.heartbeatLoop(ctx)
	a.runPods(ctx)
	klog.Info("stopping: ending every process")
	a.shutdown()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
