package main

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpandAsTheKubelet(t *testing.T) {
	env := map[string]string{"POD_NAMESPACE": "wasd-system", "EMPTY": ""}
	for in, want := range map[string]string{
		"$(POD_NAMESPACE)":        "wasd-system",
		"--ns=$(POD_NAMESPACE)/x": "--ns=wasd-system/x",
		"$(UNDEFINED)":            "$(UNDEFINED)",
		"$$(POD_NAMESPACE)":       "$(POD_NAMESPACE)",
		"a$(EMPTY)b":              "ab",
		"$(POD_NAMESPACE":         "$(POD_NAMESPACE",
		"plain":                   "plain",
		"$$$(POD_NAMESPACE)":      "$wasd-system",
		"cost: $5":                "cost: $5",
	} {
		if got := expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRewriteListenArgs(t *testing.T) {
	ip := "127.0.0.7"
	cases := []struct{ in, want []string }{
		{ // the chart's webhook args: listen flags to the pod IP, --bind-address added
			[]string{"webhook", "--port", "9443", "--health-probe-bind-address", ":8081", "--metrics-bind-address", ":8080"},
			[]string{"webhook", "--bind-address", ip, "--port", "9443", "--health-probe-bind-address", ip + ":8081",
				"--metrics-bind-address", ip + ":8080"},
		},
		{ // = forms, 0.0.0.0 and [::], "0" kept
			[]string{"reconciler", "--health-probe-bind-address=0.0.0.0:8081", "--metrics-bind-address=0"},
			[]string{"reconciler", "--health-probe-bind-address=" + ip + ":8081", "--metrics-bind-address=0"},
		},
		{
			[]string{"webhook", "--bind-address=0.0.0.0", "--metrics-bind-address", "[::]:9090"},
			[]string{"webhook", "--bind-address=" + ip, "--metrics-bind-address", ip + ":9090"},
		},
		{ // an explicit address is kept
			[]string{"webhook", "--bind-address", "127.0.0.1", "--health-probe-bind-address", "127.0.0.1:1"},
			[]string{"webhook", "--bind-address", "127.0.0.1", "--health-probe-bind-address", "127.0.0.1:1"},
		},
		{ // other subcommands untouched
			[]string{"certs", "rotate", "--once"},
			[]string{"certs", "rotate", "--once"},
		},
		{ // after -- nothing is a flag
			[]string{"reconciler", "--", "--metrics-bind-address", ":1"},
			[]string{"reconciler", "--", "--metrics-bind-address", ":1"},
		},
	}
	for _, c := range cases {
		if got := rewriteListenArgs(c.in, ip); !reflect.DeepEqual(got, c.want) {
			t.Errorf("rewriteListenArgs(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestImageRepository(t *testing.T) {
	repos := []string{"ghcr.io/wasd-io/wasd"}
	for img, want := range map[string]bool{
		"ghcr.io/wasd-io/wasd:0.9.0":            true,
		"ghcr.io/wasd-io/wasd@sha256:abc":       true,
		"ghcr.io/wasd-io/wasd":                  true,
		"ghcr.io/wasd-io/wasd-other:1":          false,
		"registry.k8s.io/pause:3.10":            false,
		"localhost:5000/ghcr.io/wasd-io/wasd:1": false,
	} {
		if got := isWasdImage(img, repos); got != want {
			t.Errorf("isWasdImage(%q) = %t", img, got)
		}
	}
	if got := imageRepository("host:5000/a/b:1"); got != "host:5000/a/b" {
		t.Errorf("imageRepository = %q", got)
	}
}

func TestContainerEnvAndArgv(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-1", Namespace: "wasd-system", UID: "u1",
		Labels: map[string]string{"app": "w"}}, Spec: v1.PodSpec{NodeName: "node-1"}}
	c := &v1.Container{
		Args: []string{"webhook", "--lease-namespace", "$(POD_NAMESPACE)", "--ip=$(MY_IP)"},
		Env: []v1.EnvVar{
			{Name: "POD_NAMESPACE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "MY_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "APP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "COMBINED", Value: "$(POD_NAMESPACE).$(MY_IP)"},
			{Name: "FROM_SECRET", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
				LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Key: "k"}}},
		},
	}
	lookup := func(kind, name, key string) (string, bool, error) { return kind + "/" + name + "/" + key, true, nil }
	all := func(kind, name string) (map[string]string, bool, error) { return nil, false, nil }
	env, err := containerEnv(c, podFields{pod: pod, podIP: "127.0.0.9", hostIP: "127.0.0.1"}, "127.0.0.1", "6443",
		nil, lookup, all)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"POD_NAMESPACE": "wasd-system", "MY_IP": "127.0.0.9", "APP": "w", "COMBINED": "wasd-system.127.0.0.9",
		"FROM_SECRET": "secret/s/k", "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "6443",
		"HOSTNAME": "w-1",
	} {
		if env.vals[k] != want {
			t.Errorf("env %s = %q, want %q", k, env.vals[k], want)
		}
	}
	argv := containerArgv(c, "/wasd", env.vals)
	want := "/wasd webhook --lease-namespace wasd-system --ip=127.0.0.9"
	if got := strings.Join(argv, " "); got != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
}

func TestBinaryForTag(t *testing.T) {
	byTag, err := parseTagBinaries("0.1.0=/cache/old/wasd, 0.0.9=/x")
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]string{
		"ghcr.io/wasd-io/wasd:0.1.0":                "/cache/old/wasd",
		"localhost:5000/wasd:0.0.9":                 "/x",
		"ghcr.io/wasd-io/wasd:0.1.0-130-gabc":       "/new",
		"ghcr.io/wasd-io/wasd":                      "/new",
		"ghcr.io/wasd-io/wasd:0.1.0@sha256:0123abc": "/cache/old/wasd",
		"ghcr.io/wasd-io/wasd@sha256:0123abc":       "/new",
	} {
		if got := binaryFor(image, "/new", byTag); got != want {
			t.Errorf("binaryFor(%q) = %q, want %q", image, got, want)
		}
	}
	if _, err := parseTagBinaries("0.1.0"); err == nil {
		t.Error("TAG without =PATH accepted")
	}
	if m, err := parseTagBinaries(""); err != nil || len(m) != 0 {
		t.Errorf("empty list: %v %v", m, err)
	}
}
