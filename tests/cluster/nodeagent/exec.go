package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
)

type bindMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// execSpecFile is what the agent hands its mount-exec helper: the process
// to exec once the mounts are in place and the credentials dropped.
type execSpecFile struct {
	Mounts []bindMount `json:"mounts"`
	Binary string      `json:"binary"`
	Argv   []string    `json:"argv"`
	Env    []string    `json:"env"`
	Dir    string      `json:"dir"`
	UID    int64       `json:"uid"`
	GID    int64       `json:"gid"`
	Groups []int64     `json:"groups"`
	// Hostname in the process's own UTS namespace: the pod's, as in a
	// container (leader election identities are hostnames).
	Hostname string `json:"hostname"`
}

func (a *agent) execSpec(rt *podRT, c *ctrRT, vols map[string]string) (*execSpecFile, error) {
	pod := rt.pod
	f := podFields{pod: pod, podIP: rt.ip, hostIP: hostIP}
	ctx := rt.ctx
	lookup := func(kind, name, key string) (string, bool, error) {
		data, found, err := a.objectData(ctx, pod.Namespace, kind, name)
		if err != nil || !found {
			return "", false, err
		}
		v, ok := data[key]
		return string(v), ok, nil
	}
	all := func(kind, name string) (map[string]string, bool, error) {
		data, found, err := a.objectData(ctx, pod.Namespace, kind, name)
		out := map[string]string{}
		for k, v := range data {
			out[k] = string(v)
		}
		return out, found, err
	}
	env, err := containerEnv(&c.spec, f, a.apiHost, a.apiPort, a.alloc, lookup, all)
	if err != nil {
		return nil, err
	}
	argv := containerArgv(&c.spec, a.o.entrypoint, env.vals)
	if argv[0] != a.o.entrypoint {
		return nil, fmt.Errorf("command %q: only the image's entrypoint %s can run here", argv[0], a.o.entrypoint)
	}
	argv = append(argv[:1:1], rewriteListenArgs(argv[1:], rt.ip)...)
	mounts, err := mountList(&c.spec, vols)
	if err != nil {
		return nil, err
	}
	spec := &execSpecFile{Mounts: mounts, Binary: binaryFor(c.spec.Image, a.o.wasdBinary, a.o.byTag), Argv: argv, Env: env.Strings(),
		Dir: c.spec.WorkingDir, UID: 0, GID: 0, Hostname: podHostname(pod)}
	// The pod's and the container's securityContext: uid, gid, fsGroup and
	// supplemental groups, as the container's process would have them.
	if sc := pod.Spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			spec.UID = *sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			spec.GID = *sc.RunAsGroup
		}
		if sc.FSGroup != nil {
			spec.Groups = append(spec.Groups, *sc.FSGroup)
		}
		spec.Groups = append(spec.Groups, sc.SupplementalGroups...)
	}
	if sc := c.spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			spec.UID = *sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			spec.GID = *sc.RunAsGroup
		}
	}
	return spec, nil
}

// startProcess starts the mount-exec helper (this binary) in a new, private
// mount namespace; it execs into the container's process, so the PID is the
// container's. The OS thread stays locked until the process is waited for:
// Pdeathsig is tied to the thread that forked.
func (a *agent) startProcess(spec *execSpecFile, logf *os.File) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "mount-exec", string(js))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// a private mount namespace (Go also makes "/" MS_REC|MS_PRIVATE in
		// the child) and a UTS namespace for the pod's hostname
		Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS,
		Setpgid:      true,
		Pdeathsig:    syscall.SIGKILL,
	}
	runtime.LockOSThread() // the caller unlocks once cmd.Wait returns
	if err := cmd.Start(); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return cmd, nil
}

// mountExec is the helper's side: bind mounts, credentials, exec. It runs
// in the private mount namespace the agent made for it; mount points that
// do not exist are created (empty directories or files) on the host.
func mountExec(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: nodeagent mount-exec SPEC_JSON")
		return 2
	}
	var spec execSpecFile
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent mount-exec: %v\n", err)
		return 2
	}
	for _, m := range spec.Mounts {
		st, err := os.Stat(m.Source)
		if err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent mount-exec: %v\n", err)
			return 1
		}
		if st.IsDir() {
			err = os.MkdirAll(m.Target, 0o755)
		} else if _, err = os.Stat(m.Target); os.IsNotExist(err) {
			if err = os.MkdirAll(filepath.Dir(m.Target), 0o755); err == nil {
				var fh *os.File
				if fh, err = os.OpenFile(m.Target, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fh.Close()
				}
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent mount-exec: mount point %s: %v\n", m.Target, err)
			return 1
		}
		if err := syscall.Mount(m.Source, m.Target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent mount-exec: bind %s on %s: %v\n", m.Source, m.Target, err)
			return 1
		}
		if m.ReadOnly {
			if err := syscall.Mount("", m.Target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				fmt.Fprintf(os.Stderr, "nodeagent mount-exec: read-only %s: %v\n", m.Target, err)
				return 1
			}
		}
	}
	if spec.Hostname != "" {
		if err := syscall.Sethostname([]byte(spec.Hostname)); err != nil {
			fmt.Fprintf(os.Stderr, "nodeagent mount-exec: sethostname: %v\n", err)
			return 1
		}
	}
	groups := make([]int, 0, len(spec.Groups))
	for _, g := range spec.Groups {
		groups = append(groups, int(g))
	}
	if err := syscall.Setgroups(groups); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent mount-exec: setgroups: %v\n", err)
		return 1
	}
	if err := syscall.Setgid(int(spec.GID)); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent mount-exec: setgid: %v\n", err)
		return 1
	}
	if err := syscall.Setuid(int(spec.UID)); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent mount-exec: setuid: %v\n", err)
		return 1
	}
	// A change of credentials clears the parent-death signal: set it again.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		fmt.Fprintf(os.Stderr, "nodeagent mount-exec: chdir %s: %v\n", dir, err)
		return 1
	}
	err := syscall.Exec(spec.Binary, spec.Argv, spec.Env)
	fmt.Fprintf(os.Stderr, "nodeagent mount-exec: exec %s: %v\n", spec.Binary, err)
	return 127
}

// podHostname is the kubelet's: spec.hostname, else the pod's name, at most
// 63 characters.
func podHostname(pod *v1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}
