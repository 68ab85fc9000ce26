package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// volumeDirs resolves a pod's volumes to host paths: a claim to its bound
// PersistentVolume's directory, an emptyDir to a directory of the pod, and
// configMaps and secrets to files written from their data. Volumes of other
// kinds (the projected service-account token among them) are not mounted.
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
