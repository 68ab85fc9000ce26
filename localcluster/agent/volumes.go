package agent

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
		case v.ConfigMap != nil:
			cm, err := cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			data := map[string][]byte{}
			for k, s := range cm.Data {
				data[k] = []byte(s)
			}
			for k, b := range cm.BinaryData {
				data[k] = b
			}
			dir, err := writeVolume(filepath.Join(podDir, "volumes", v.Name), data, v.ConfigMap.Items)
			if err != nil {
				return nil, err
			}
			out[v.Name] = dir
		case v.DownwardAPI != nil:
			files, err := downwardFiles(pod, v.DownwardAPI.Items)
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			dir, err := writeVolume(filepath.Join(podDir, "volumes", v.Name), files, nil)
			if err != nil {
				return nil, err
			}
			out[v.Name] = dir
		case v.Projected != nil:
			files, err := projectedFiles(ctx, cs, pod, v.Projected)
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			dir, err := writeVolume(filepath.Join(podDir, "volumes", v.Name), files, nil)
			if err != nil {
				return nil, err
			}
			out[v.Name] = dir
		case v.Secret != nil:
			sec, err := cs.CoreV1().Secrets(pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("agent: volume %s: %w", v.Name, err)
			}
			dir, err := writeVolume(filepath.Join(podDir, "volumes", v.Name), sec.Data, v.Secret.Items)
			if err != nil {
				return nil, err
			}
			out[v.Name] = dir
		}
	}
	return out, nil
}

// writeVolume writes data as files in dir, all keys or only items.
func writeVolume(dir string, data map[string][]byte, items []corev1.KeyToPath) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("agent: %w", err)
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		for k, b := range data {
			files[k] = b
		}
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			return "", fmt.Errorf("agent: volume key %s missing", it.Key)
		}
		files[it.Path] = b
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.Clean("/"+name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("agent: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", fmt.Errorf("agent: %w", err)
		}
	}
	return dir, nil
}

// containerMounts returns c's mounts given the pod's resolved volumes.
func containerMounts(c corev1.Container, vols map[string]string) []Mount {
	var out []Mount
	for _, vm := range c.VolumeMounts {
		src, ok := vols[vm.Name]
		if !ok {
			continue // a volume kind that is not mounted (see volumeDirs)
		}
		if vm.SubPath != "" {
			src = filepath.Join(src, filepath.Clean("/"+vm.SubPath))
		}
		out = append(out, Mount{Source: src, Target: vm.MountPath, ReadOnly: vm.ReadOnly})
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
	put := func(data map[string][]byte, items []corev1.KeyToPath) error {
		if len(items) == 0 {
			for k, b := range data {
				out[k] = b
			}
			return nil
		}
		for _, it := range items {
			b, ok := data[it.Key]
			if !ok {
				return fmt.Errorf("key %s missing", it.Key)
			}
			out[it.Path] = b
		}
		return nil
	}
	for _, src := range pv.Sources {
		switch {
		case src.ConfigMap != nil:
			cm, err := cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, src.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				if src.ConfigMap.Optional != nil && *src.ConfigMap.Optional {
					continue
				}
				return nil, err
			}
			data := map[string][]byte{}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			if err := put(data, src.ConfigMap.Items); err != nil {
				return nil, err
			}
		case src.Secret != nil:
			sec, err := cs.CoreV1().Secrets(pod.Namespace).Get(ctx, src.Secret.Name, metav1.GetOptions{})
			if err != nil {
				if src.Secret.Optional != nil && *src.Secret.Optional {
					continue
				}
				return nil, err
			}
			if err := put(sec.Data, src.Secret.Items); err != nil {
				return nil, err
			}
		case src.DownwardAPI != nil:
			files, err := downwardFiles(pod, src.DownwardAPI.Items)
			if err != nil {
				return nil, err
			}
			for k, b := range files {
				out[k] = b
			}
		case src.ServiceAccountToken != nil:
			sa := pod.Spec.ServiceAccountName
			if sa == "" {
				sa = "default"
			}
			tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
				Audiences:         audiences(src.ServiceAccountToken.Audience),
				ExpirationSeconds: src.ServiceAccountToken.ExpirationSeconds,
				BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
			}}
			tok, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, tr, metav1.CreateOptions{})
			if err != nil {
				return nil, fmt.Errorf("service-account token: %w", err)
			}
			out[src.ServiceAccountToken.Path] = []byte(tok.Status.Token)
		}
	}
	return out, nil
}

func audiences(a string) []string {
	if a == "" {
		return nil
	}
	return []string{a}
}
