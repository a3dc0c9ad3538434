package main

// The kubelet's /containerLogs endpoint, enough for `kubectl logs` (and
// `helm test --logs`): the API server proxies it to the Node's InternalIP
// (127.0.0.1) and daemonEndpoints port. follow is not supported: the log as
// it is now is sent. Every start of the container is in the same file,
// between "=== nodeagent:" lines.

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

func (a *agent) serveLogs(ctx context.Context, ln net.Listener, cert tls.Certificate) {
	mux := http.NewServeMux()
	mux.HandleFunc("/containerLogs/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
		if len(parts) != 3 {
			http.Error(w, "want /containerLogs/NAMESPACE/POD/CONTAINER", http.StatusBadRequest)
			return
		}
		for _, p := range parts {
			if p == "" || strings.ContainsAny(p, "/\\") || p == ".." {
				http.Error(w, "bad name", http.StatusBadRequest)
				return
			}
		}
		path := filepath.Join(a.o.stateDir, "logs", parts[0]+"_"+parts[1]+"_"+parts[2]+".log")
		data, err := os.ReadFile(path)
		if err != nil {
			http.Error(w, "no log for "+strings.Join(parts, "/"), http.StatusNotFound)
			return
		}
		if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil && n >= 0 {
			var lines []string
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			if n < len(lines) {
				lines = lines[len(lines)-n:]
			}
			data = []byte(strings.Join(lines, "\n") + "\n")
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(data)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ServeTLS(ln, "", ""); err != nil && err != http.ErrServerClosed {
		klog.Errorf("log server: %v", err)
	}
}
