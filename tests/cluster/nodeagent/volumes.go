package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// writeVolumes writes the pod's Secret, ConfigMap, downwardAPI, projected
// (service-account token included) and emptyDir volumes into its state
// directory: returns volume name -> host directory, and how often the
// projected tokens must be rewritten (0: none).
func (a *agent) writeVolumes(ctx context.Context, rt *podRT) (map[string]string, time.Duration, error) {
	pod := rt.pod
	out := map[string]string{}
	var refresh time.Duration
	fsGroup := int64(-1)
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		fsGroup = *sc.FSGroup
	}
	f := podFields{pod: pod, podIP: rt.ip, hostIP: hostIP}
	for _, vol := range pod.Spec.Volumes {
		dir := filepath.Join(rt.dir, "volumes", vol.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, 0, err
		}
		out[vol.Name] = dir
		files := map[string]fileData{}
		var err error
		switch {
		case vol.EmptyDir != nil:
			_ = os.Chmod(dir, 0o777)
			continue
		case vol.Secret != nil:
			err = a.keyFiles(ctx, files, pod.Namespace, "secret", vol.Secret.SecretName, vol.Secret.Items,
				vol.Secret.DefaultMode, ptr.Deref(vol.Secret.Optional, false))
		case vol.ConfigMap != nil:
			err = a.keyFiles(ctx, files, pod.Namespace, "configmap", vol.ConfigMap.Name, vol.ConfigMap.Items,
				vol.ConfigMap.DefaultMode, ptr.Deref(vol.ConfigMap.Optional, false))
		case vol.DownwardAPI != nil:
			err = downwardFiles(files, f, vol.DownwardAPI.Items, vol.DownwardAPI.DefaultMode)
		case vol.Projected != nil:
			for _, src := range vol.Projected.Sources {
				mode := vol.Projected.DefaultMode
				switch {
				case src.Secret != nil:
					err = a.keyFiles(ctx, files, pod.Namespace, "secret", src.Secret.Name, src.Secret.Items, mode,
						ptr.Deref(src.Secret.Optional, false))
				case src.ConfigMap != nil:
					err = a.keyFiles(ctx, files, pod.Namespace, "configmap", src.ConfigMap.Name, src.ConfigMap.Items,
						mode, ptr.Deref(src.ConfigMap.Optional, false))
				case src.DownwardAPI != nil:
					err = downwardFiles(files, f, src.DownwardAPI.Items, mode)
				case src.ServiceAccountToken != nil:
					var tok string
					var life time.Duration
					tok, life, err = a.token(ctx, pod, src.ServiceAccountToken)
					if err == nil {
						files[src.ServiceAccountToken.Path] = fileData{data: []byte(tok), mode: modeOr(mode, 0o644)}
						if r := life * 8 / 10; refresh == 0 || r < refresh {
							refresh = r
						}
					}
				default:
					err = fmt.Errorf("projected volume %s: unsupported source", vol.Name)
				}
				if err != nil {
					break
				}
			}
		case vol.HostPath != nil:
			out[vol.Name] = vol.HostPath.Path
			continue
		default:
			return nil, 0, fmt.Errorf("volume %s: unsupported type", vol.Name)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("volume %s: %w", vol.Name, err)
		}
		if err := writeFiles(dir, files, fsGroup); err != nil {
			return nil, 0, fmt.Errorf("volume %s: %w", vol.Name, err)
		}
	}
	return out, refresh, nil
}

// hasObjectVolumes: the pod has a Secret or ConfigMap volume.
func hasObjectVolumes(pod *v1.Pod) bool {
	for _, vol := range pod.Spec.Volumes {
		if vol.Secret != nil || vol.ConfigMap != nil {
			return true
		}
	}
	return false
}

// syncObjectVolumes rewrites the pod's Secret and ConfigMap volumes from the
// objects as they are now (writeFiles leaves unchanged files alone). A key
// removed from the object stays on disk; an object gone keeps its files.
func (a *agent) syncObjectVolumes(ctx context.Context, rt *podRT) error {
	pod := rt.pod
	fsGroup := int64(-1)
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		fsGroup = *sc.FSGroup
	}
	for _, vol := range pod.Spec.Volumes {
		files := map[string]fileData{}
		var err error
		switch {
		case vol.Secret != nil:
			err = a.keyFiles(ctx, files, pod.Namespace, "secret", vol.Secret.SecretName, vol.Secret.Items,
				vol.Secret.DefaultMode, true)
		case vol.ConfigMap != nil:
			err = a.keyFiles(ctx, files, pod.Namespace, "configmap", vol.ConfigMap.Name, vol.ConfigMap.Items,
				vol.ConfigMap.DefaultMode, true)
		default:
			continue
		}
		if err == nil {
			err = writeFiles(filepath.Join(rt.dir, "volumes", vol.Name), files, fsGroup)
		}
		if err != nil {
			return fmt.Errorf("volume %s: %w", vol.Name, err)
		}
	}
	return nil
}

type fileData struct {
	data []byte
	mode os.FileMode
}

func modeOr(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m)
}

// writeFiles replaces dir's files by files (each written to a temporary name
// and renamed, so a reader never sees half a file), group fsGroup when >= 0.
func writeFiles(dir string, files map[string]fileData, fsGroup int64) error {
	for rel, fd := range files {
		p := filepath.Join(dir, filepath.Clean("/"+rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if st, err := os.Stat(p); err == nil && st.Mode().Perm() == fd.mode.Perm() {
			if cur, err := os.ReadFile(p); err == nil && string(cur) == string(fd.data) {
				continue // unchanged: a reader polling mtimes sees nothing
			}
		}
		tmp := filepath.Join(filepath.Dir(p), ".tmp."+filepath.Base(p))
		if err := os.WriteFile(tmp, fd.data, 0o600); err != nil {
			return err
		}
		if fsGroup >= 0 {
			if err := os.Chown(tmp, 0, int(fsGroup)); err != nil {
				return err
			}
		}
		if err := os.Chmod(tmp, fd.mode.Perm()); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}

func (a *agent) keyFiles(ctx context.Context, files map[string]fileData, ns, kind, name string, items []v1.KeyToPath,
	defMode *int32, optional bool) error {
	data, found, err := a.objectData(ctx, ns, kind, name)
	if err != nil {
		return err
	}
	if !found {
		if optional {
			return nil
		}
		return fmt.Errorf("%s %q not found", kind, name)
	}
	mode := modeOr(defMode, 0o644)
	if len(items) == 0 {
		for k, v := range data {
			files[k] = fileData{data: v, mode: mode}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return fmt.Errorf("%s %q has no key %q", kind, name, it.Key)
		}
		files[it.Path] = fileData{data: v, mode: modeOr(it.Mode, mode)}
	}
	return nil
}

func (a *agent) objectData(ctx context.Context, ns, kind, name string) (map[string][]byte, bool, error) {
	switch kind {
	case "secret":
		s, err := a.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return s.Data, true, nil
	default:
		c, err := a.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		out := map[string][]byte{}
		for k, v := range c.Data {
			out[k] = []byte(v)
		}
		for k, v := range c.BinaryData {
			out[k] = v
		}
		return out, true, nil
	}
}

func downwardFiles(files map[string]fileData, f podFields, items []v1.DownwardAPIVolumeFile, defMode *int32) error {
	for _, it := range items {
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = f.fieldValue(it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			c := containerByName(f.pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return fmt.Errorf("downwardAPI %s: no container %q", it.Path, it.ResourceFieldRef.ContainerName)
			}
			val, err = resourceValue(c, it.ResourceFieldRef, nil)
		}
		if err != nil {
			return err
		}
		files[it.Path] = fileData{data: []byte(val), mode: modeOr(it.Mode, modeOr(defMode, 0o644))}
	}
	return nil
}

func containerByName(p *v1.Pod, name string) *v1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name || name == "" {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// token is a TokenRequest bound to the pod, as the kubelet makes for a
// projected serviceAccountToken source.
func (a *agent) token(ctx context.Context, pod *v1.Pod, src *v1.ServiceAccountTokenProjection) (string,
	time.Duration, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(ptr.Deref(src.ExpirationSeconds, 3600)),
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	tr, err := a.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("token for serviceaccount %s/%s: %w", pod.Namespace, sa, err)
	}
	life := time.Until(tr.Status.ExpirationTimestamp.Time)
	if life < time.Minute {
		life = time.Minute
	}
	return tr.Status.Token, life, nil
}

// mountList is the container's bind mounts: host path -> mount path.
func mountList(c *v1.Container, vols map[string]string) ([]bindMount, error) {
	var out []bindMount
	for _, m := range c.VolumeMounts {
		src, ok := vols[m.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s: no such volume", m.Name)
		}
		if m.SubPath != "" {
			src = filepath.Join(src, filepath.Clean("/"+m.SubPath))
		}
		if !strings.HasPrefix(m.MountPath, "/") {
			return nil, fmt.Errorf("volumeMount %s: mountPath %q is not absolute", m.Name, m.MountPath)
		}
		out = append(out, bindMount{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	return out, nil
}

func int64s(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}
