package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/sandbox"
)

// volumeDirs resolves a pod's volumes to host paths: a claim to its bound
// PersistentVolume's directory, an emptyDir to a directory of the pod, and
// configMaps, secrets, downwardAPI and projected volumes (service-account
// token included) to files written from their data. Other kinds are not
// mounted.
func volumeDirs(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, podDir string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			pvc, err := cs.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			if pvc.Spec.VolumeName == "" {
				return nil, fmt.Errorf("agent: volume %s: claim %s is not bound", v.Name, pvc.Name)
			}
			pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			switch {
			case pv.Spec.HostPath != nil:
				out[v.Name] = pv.Spec.HostPath.Path
			case pv.Spec.Local != nil:
				out[v.Name] = pv.Spec.Local.Path
			default:
				return nil, fmt.Errorf("agent: volume %s: PV %s is neither hostPath nor local", v.Name, pv.Name)
			}
		case v.EmptyDir != nil:
			dir := filepath.Join(podDir, "volumes", v.Name)
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			out[v.Name] = dir
		case v.HostPath != nil:
			out[v.Name] = v.HostPath.Path
		default:
			files, ok, err := fileVolume(ctx, cs, pod, v)
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			if !ok {
				continue // a kind that is not mounted
			}
			dir := filepath.Join(podDir, "volumes", v.Name)
			if err := writeFiles(dir, files); err != nil {
				return nil, err
			}
			out[v.Name] = dir
		}
	}
	return out, nil
}

// fileVolume returns the files of a configMap, secret, downwardAPI or
// projected volume; ok is false for other kinds.
func fileVolume(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, v corev1.Volume) (map[string][]byte, bool, error) {
	var files map[string][]byte
	var err error
	switch {
	case v.ConfigMap != nil:
		files, err = configMapFiles(ctx, cs, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
	case v.Secret != nil:
		files, err = secretFiles(ctx, cs, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional)
	case v.DownwardAPI != nil:
		files, err = downwardFiles(pod, v.DownwardAPI.Items)
	case v.Projected != nil:
		files, err = projectedFiles(ctx, cs, pod, v.Projected)
	default:
		return nil, false, nil
	}
	return files, true, err
}

func configMapFiles(ctx context.Context, cs kubernetes.Interface, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if optional != nil && *optional {
			return nil, nil
		}
		return nil, err
	}
	data := map[string][]byte{}
	for k, s := range cm.Data {
		data[k] = []byte(s)
	}
	for k, b := range cm.BinaryData {
		data[k] = b
	}
	return selectItems(data, items)
}

func secretFiles(ctx context.Context, cs kubernetes.Interface, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if optional != nil && *optional {
			return nil, nil
		}
		return nil, err
	}
	return selectItems(sec.Data, items)
}

// selectItems returns every key of data as a file, or only items, at their
// paths.
func selectItems(data map[string][]byte, items []corev1.KeyToPath) (map[string][]byte, error) {
	if len(items) == 0 {
		return data, nil
	}
	files := map[string][]byte{}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("key %s missing", it.Key)
		}
		files[it.Path] = b
	}
	return files, nil
}

// writeFiles writes files (path -> content) under dir.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.Clean("/"+name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	return nil
}

// containerMounts returns c's mounts given the pod's resolved volumes.
func containerMounts(c corev1.Container, vols map[string]string) []sandbox.Mount {
	var out []sandbox.Mount
	for _, vm := range c.VolumeMounts {
		src, ok := vols[vm.Name]
		if !ok {
			continue // a volume kind that is not mounted (see volumeDirs)
		}
		if vm.SubPath != "" {
			src = filepath.Join(src, filepath.Clean("/"+vm.SubPath))
		}
		out = append(out, sandbox.Mount{Source: src, Target: vm.MountPath, ReadOnly: vm.ReadOnly})
	}
	return out
}

// downwardFiles renders a downwardAPI volume's items (fieldRef only).
func downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, it := range items {
		if it.FieldRef == nil {
			continue // resourceFieldRef: not supported
		}
		v, err := fieldValue(pod, it.FieldRef.FieldPath)
		if err != nil {
			return nil, err
		}
		out[it.Path] = []byte(v)
	}
	return out, nil
}

// fieldValue is the downward API's value of a pod field.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	kv := func(m map[string]string) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%q\n", k, m[k])
		}
		return b.String()
	}
	switch {
	case path == "metadata.name":
		return pod.Name, nil
	case path == "metadata.namespace":
		return pod.Namespace, nil
	case path == "metadata.uid":
		return string(pod.UID), nil
	case path == "metadata.labels":
		return kv(pod.Labels), nil
	case path == "metadata.annotations":
		return kv(pod.Annotations), nil
	case strings.HasPrefix(path, "metadata.labels['") && strings.HasSuffix(path, "']"):
		return pod.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")], nil
	case strings.HasPrefix(path, "metadata.annotations['") && strings.HasSuffix(path, "']"):
		return pod.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")], nil
	case path == "spec.nodeName":
		return pod.Spec.NodeName, nil
	case path == "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	}
	return "", fmt.Errorf("downward API field %q is not supported", path)
}

// projectedFiles renders a projected volume: configMaps, secrets,
// downwardAPI items and a service-account token (TokenRequest API).
func projectedFiles(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, pv *corev1.ProjectedVolumeSource) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, src := range pv.Sources {
		var files map[string][]byte
		var err error
		switch {
		case src.ConfigMap != nil:
			files, err = configMapFiles(ctx, cs, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional)
		case src.Secret != nil:
			files, err = secretFiles(ctx, cs, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional)
		case src.DownwardAPI != nil:
			files, err = downwardFiles(pod, src.DownwardAPI.Items)
		case src.ServiceAccountToken != nil:
			files, err = tokenFile(ctx, cs, pod, src.ServiceAccountToken)
		}
		if err != nil {
			return nil, err
		}
		for k, b := range files {
			out[k] = b
		}
	}
	return out, nil
}

// tokenFile asks the TokenRequest API for a token bound to the pod.
func tokenFile(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (map[string][]byte, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences(src.Audience),
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	tok, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, tr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("service-account token: %w", err)
	}
	return map[string][]byte{src.Path: []byte(tok.Status.Token)}, nil
}

func audiences(a string) []string {
	if a == "" {
		return nil
	}
	return []string{a}
}
