package main

// The pure parts of the agent: no API calls, no processes. Unit-tested in
// pure_test.go.

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// imageRepository is an image reference without its tag or digest:
// "ghcr.io/wasd-io/wasd:1.2" -> "ghcr.io/wasd-io/wasd"; a registry port
// ("host:5000/wasd:1") is kept.
func imageRepository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		image = image[:i]
	}
	return image
}

// imageTag: the tag of an image reference ("" when it has none; a digest is
// not a tag).
func imageTag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[i+1:]
	}
	return ""
}

// parseTagBinaries reads --wasd-binary-for-tag: a comma list of TAG=PATH.
func parseTagBinaries(list string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range splitList(list) {
		tag, path, ok := strings.Cut(item, "=")
		if !ok || tag == "" || path == "" {
			return nil, fmt.Errorf("--wasd-binary-for-tag: %q is not TAG=PATH", item)
		}
		out[tag] = path
	}
	return out, nil
}

// binaryFor: the binary that stands for a wasd image: the one given for its
// tag, else def (the image's tag is otherwise ignored).
func binaryFor(image, def string, byTag map[string]string) string {
	if b, ok := byTag[imageTag(image)]; ok {
		return b
	}
	return def
}

// isWasdImage: the image's repository is one of repos (each compared
// without a tag too, and with a leading "docker.io/" made optional).
func isWasdImage(image string, repos []string) bool {
	got := strings.TrimPrefix(imageRepository(image), "docker.io/")
	for _, r := range repos {
		if r == "" {
			continue
		}
		if strings.TrimPrefix(imageRepository(r), "docker.io/") == got {
			return true
		}
	}
	return false
}

// expand does what the kubelet does to a container's command, args and env
// values: $(VAR) is replaced by VAR's value when VAR is defined, left as it
// is when not; $$ is a literal $. The kubelet's own implementation
// (k8s.io/kubernetes/third_party/forked/golang/expansion).
func expand(s string, env map[string]string) string {
	return expansion.Expand(s, expansion.MappingFuncFor(env))
}

// listenFlags are the wasd flags that name an address to listen on
// (ADDR:PORT; a leading ':' means every address).
var listenFlags = map[string]bool{
	"--health-probe-bind-address": true,
	"--metrics-bind-address":      true,
}

// rewriteListenArgs makes a wasd process listen on its pod IP only, as a
// container in its own network namespace effectively does. On one host every
// pod shares the loopback interface, so two replicas binding 0.0.0.0:9443
// would collide; bound to 127.0.0.N each they do not.
//   - --health-probe-bind-address / --metrics-bind-address ":P",
//     "0.0.0.0:P" or "[::]:P" become "IP:P" ("0", disabled, is kept);
//   - --bind-address 0.0.0.0 / :: becomes IP;
//   - `webhook` without --bind-address gets "--bind-address IP" right
//     after the subcommand (its default is 0.0.0.0).
//
// Both "--flag value" and "--flag=value" forms are handled. Nothing else is
// touched.
func rewriteListenArgs(args []string, ip string) []string {
	out := make([]string, 0, len(args)+2)
	sawBind := false
	fix := func(flag, val string) string {
		if flag == "--bind-address" {
			sawBind = true
			if val == "0.0.0.0" || val == "::" || val == "" || val == "[::]" {
				return ip
			}
			return val
		}
		if val == "0" {
			return val
		}
		host, port, err := net.SplitHostPort(val)
		if err != nil {
			return val
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			return net.JoinHostPort(ip, port)
		}
		return val
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		name, val, hasEq := strings.Cut(a, "=")
		if listenFlags[name] || name == "--bind-address" {
			if hasEq {
				out = append(out, name+"="+fix(name, val))
				continue
			}
			if i+1 < len(args) {
				out = append(out, a, fix(name, args[i+1]))
				i++
				continue
			}
		}
		out = append(out, a)
	}
	if len(out) > 0 && out[0] == "webhook" && !sawBind {
		out = append([]string{"webhook", "--bind-address", ip}, out[1:]...)
	}
	return out
}

// podFields is what a fieldRef can name, for one pod.
type podFields struct {
	pod    *v1.Pod
	podIP  string
	hostIP string
}

// fieldValue resolves a downward-API fieldRef path as the kubelet does
// (pkg/fieldpath plus the status fields the kubelet fills in).
func (f podFields) fieldValue(path string) (string, error) {
	p := f.pod
	switch path {
	case "metadata.name":
		return p.Name, nil
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.uid":
		return string(p.UID), nil
	case "metadata.labels":
		return formatMap(p.Labels), nil
	case "metadata.annotations":
		return formatMap(p.Annotations), nil
	case "spec.nodeName":
		return p.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return f.hostIP, nil
	case "status.podIP", "status.podIPs":
		return f.podIP, nil
	}
	for _, pre := range []string{"metadata.labels", "metadata.annotations"} {
		if strings.HasPrefix(path, pre+"['") && strings.HasSuffix(path, "']") {
			key := path[len(pre)+2 : len(path)-2]
			if pre == "metadata.labels" {
				return p.Labels[key], nil
			}
			return p.Annotations[key], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// formatMap is the downward API's k="v" lines, sorted.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// resourceValue resolves a resourceFieldRef: the container's limit (or
// request), else the node's allocatable for limits; rounded up by divisor.
func resourceValue(c *v1.Container, ref *v1.ResourceFieldSelector, alloc v1.ResourceList) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	var q resource.Quantity
	var have bool
	switch kind {
	case "limits":
		q, have = c.Resources.Limits[v1.ResourceName(name)]
		if !have {
			q, have = alloc[v1.ResourceName(name)]
		}
	case "requests":
		q, have = c.Resources.Requests[v1.ResourceName(name)]
	default:
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	if !have {
		return "0", nil
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	v := math.Ceil(float64(q.MilliValue()) / float64(div.MilliValue()))
	return strconv.FormatInt(int64(v), 10), nil
}

// serviceEnv is what the kubelet gives every container for the `kubernetes`
// Service, pointing at the API server itself (there is no ClusterIP routing
// here).
func serviceEnv(host, port string) []v1.EnvVar {
	addr := "tcp://" + net.JoinHostPort(host, port)
	return []v1.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: host},
		{Name: "KUBERNETES_SERVICE_PORT", Value: port},
		{Name: "KUBERNETES_SERVICE_PORT_HTTPS", Value: port},
		{Name: "KUBERNETES_PORT", Value: addr},
		{Name: "KUBERNETES_PORT_443_TCP", Value: addr},
		{Name: "KUBERNETES_PORT_443_TCP_PROTO", Value: "tcp"},
		{Name: "KUBERNETES_PORT_443_TCP_PORT", Value: port},
		{Name: "KUBERNETES_PORT_443_TCP_ADDR", Value: host},
	}
}

// envList is an ordered environment: a later Set of the same name replaces
// the value in place.
type envList struct {
	names []string
	vals  map[string]string
}

func newEnvList() *envList { return &envList{vals: map[string]string{}} }

func (e *envList) Set(name, val string) {
	if _, ok := e.vals[name]; !ok {
		e.names = append(e.names, name)
	}
	e.vals[name] = val
}

func (e *envList) Strings() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.vals[n])
	}
	return out
}

// lookupFunc fetches one key of a Secret or ConfigMap ("secret" or
// "configmap"); found=false when the object or key is missing.
type lookupFunc func(kind, name, key string) (val string, found bool, err error)

// allKeysFunc fetches every key of a Secret or ConfigMap (envFrom).
type allKeysFunc func(kind, name string) (map[string]string, bool, error)

// containerEnv builds the process environment as the kubelet orders it:
// the service variables, then envFrom, then env, each env value expanded
// against what came before it.
func containerEnv(c *v1.Container, f podFields, apiHost, apiPort string, alloc v1.ResourceList,
	lookup lookupFunc, all allKeysFunc) (*envList, error) {
	env := newEnvList()
	env.Set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	env.Set("HOSTNAME", f.pod.Name)
	for _, e := range serviceEnv(apiHost, apiPort) {
		env.Set(e.Name, e.Value)
	}
	for _, from := range c.EnvFrom {
		var kind, name string
		var optional bool
		switch {
		case from.ConfigMapRef != nil:
			kind, name = "configmap", from.ConfigMapRef.Name
			optional = from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional
		case from.SecretRef != nil:
			kind, name = "secret", from.SecretRef.Name
			optional = from.SecretRef.Optional != nil && *from.SecretRef.Optional
		default:
			continue
		}
		m, found, err := all(kind, name)
		if err != nil {
			return nil, err
		}
		if !found {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%s %q not found", kind, name)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env.Set(from.Prefix+k, m[k])
		}
	}
	for _, e := range c.Env {
		val := e.Value
		switch {
		case e.ValueFrom == nil:
			val = expand(val, env.vals)
		case e.ValueFrom.FieldRef != nil:
			v, err := f.fieldValue(e.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				return nil, err
			}
			val = v
		case e.ValueFrom.ResourceFieldRef != nil:
			v, err := resourceValue(c, e.ValueFrom.ResourceFieldRef, alloc)
			if err != nil {
				return nil, err
			}
			val = v
		case e.ValueFrom.SecretKeyRef != nil, e.ValueFrom.ConfigMapKeyRef != nil:
			kind, name, key, optional := "secret", "", "", false
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				name, key, optional = r.Name, r.Key, r.Optional != nil && *r.Optional
			} else {
				r := e.ValueFrom.ConfigMapKeyRef
				kind, name, key, optional = "configmap", r.Name, r.Key, r.Optional != nil && *r.Optional
			}
			v, found, err := lookup(kind, name, key)
			if err != nil {
				return nil, err
			}
			if !found {
				if optional {
					continue
				}
				return nil, fmt.Errorf("%s %q key %q not found", kind, name, key)
			}
			val = v
		default:
			return nil, fmt.Errorf("env %s: unsupported valueFrom", e.Name)
		}
		env.Set(e.Name, val)
	}
	return env, nil
}

// containerArgv is the process's argv: the image's entrypoint (/wasd) unless
// the container sets command, then args; both expanded against env.
func containerArgv(c *v1.Container, entrypoint string, env map[string]string) []string {
	var argv []string
	if len(c.Command) > 0 {
		for _, s := range c.Command {
			argv = append(argv, expand(s, env))
		}
	} else {
		argv = []string{entrypoint}
	}
	for _, s := range c.Args {
		argv = append(argv, expand(s, env))
	}
	return argv
}
