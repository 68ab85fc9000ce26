package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

// pauseImage is what a stopped container runs (chaos.Stop's default).
const pauseImage = "registry.k8s.io/pause:3.10"

// checkImageSwap changes the image of sleeper-2's container in place to a
// pause image and back, as chaos.Stop does, and checks that the node agent
// does what a kubelet does: the old process stopped, the pause image run
// in the same pod (Running, not Ready: its exec probe fails without the
// sleeper), then the sleeper started again with its volume, the restart
// count one higher each time.
func checkImageSwap(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
	t.Helper()
	before, err := cs.CoreV1().Pods(ns).Get(ctx, "sleeper-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldPID, image := containerPID(before), before.Spec.Containers[0].Image
	// An annotation written after the pod's creation, as a fault's ledger
	// is: the node agent's status updates must keep it.
	keep := `{"metadata":{"annotations":{"kafkachaos.test/kept":"yes"}}}`
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "sleeper-2", types.MergePatchType, []byte(keep), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	setImage(t, ctx, cs, ns, "sleeper-2", pauseImage)
	waitFor(t, ctx, "sleeper-2 running the pause image, not Ready", func() (string, bool) {
		p, st := containerStatus(ctx, cs, ns, "sleeper-2")
		return st, p != nil && p.UID == before.UID && !kube.PodReady(p) && p.Status.ContainerStatuses[0].Image == pauseImage &&
			p.Status.ContainerStatuses[0].State.Running != nil && p.Status.ContainerStatuses[0].RestartCount == 1
	})
	waitFor(t, ctx, fmt.Sprintf("the sleeper's process %d gone", oldPID), func() (string, bool) {
		return "still running", !processAlive(oldPID)
	})
	setImage(t, ctx, cs, ns, "sleeper-2", image)
	waitFor(t, ctx, "sleeper-2 Ready again on its own image, same pod", func() (string, bool) {
		p, st := containerStatus(ctx, cs, ns, "sleeper-2")
		return st, p != nil && p.UID == before.UID && kube.PodReady(p) && p.Status.ContainerStatuses[0].Image == image &&
			p.Status.ContainerStatuses[0].RestartCount == 2
	})
	if p, err := cs.CoreV1().Pods(ns).Get(ctx, "sleeper-2", metav1.GetOptions{}); err != nil || p.Annotations["kafkachaos.test/kept"] != "yes" {
		t.Errorf("sleeper-2's annotations after its status changed: %v, %v; want kafkachaos.test/kept kept", p.Annotations, err)
	}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-sleeper-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.HostPath == nil {
		t.Fatalf("PV of data-sleeper-2: %v", err)
	}
	// The same pod ran its init container once, and the sleeper twice.
	raw, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "starts"))
	if err != nil || strings.Count(string(raw), "start") != 2 {
		t.Errorf("starts recorded by sleeper-2: %q, %v; want two (before and after the pause image)", raw, err)
	}
}

// setImage patches pod ns/name's first container's image, as chaos.Stop
// does.
func setImage(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name, image string) {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":%q,"image":%q}]}}`, p.Spec.Containers[0].Name, image)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s's image to %s: %v", name, image, err)
	}
}

// containerStatus reads pod ns/name and says what its first container is
// doing.
func containerStatus(ctx context.Context, cs kubernetes.Interface, ns, name string) (*corev1.Pod, string) {
	p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err.Error()
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return p, "no container status"
	}
	c := p.Status.ContainerStatuses[0]
	return p, fmt.Sprintf("uid %s ready %t image %s state %+v restarts %d", p.UID, kube.PodReady(p), c.Image, c.State, c.RestartCount)
}
