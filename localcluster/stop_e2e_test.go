package localcluster

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// checkStop keeps one broker down with chaos.Stop, as it does on any
// cluster: its container's image becomes the pause image, the node agent
// stops the JVM and runs the pause image in the same pod, which stays not
// Ready; then Recover gives the image back and the broker starts again in
// the same pod, and the ledger is empty.
func checkStop(t *testing.T, ctx context.Context, cs kubernetes.Interface, l manifests.Layout) {
	t.Helper()
	victim := l.StatefulSet + "-2"
	before, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jvm := containerPID(before)
	f := &chaos.Stop{Scope: chaos.Scope{Client: cs, Namespace: l.Namespace, RunID: "e2e"}, Pods: []string{victim}}
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Recover(context.Background()) }) // a failure below must not leave the broker down
	waitLong(t, ctx, kafkaReadyTimeout, victim+" held down on the pause image", func() (string, bool) {
		down, err := f.Down(ctx)
		_, st := containerStatus(ctx, cs, l.Namespace, victim)
		return fmt.Sprintf("%v %v: %s", down, err, st), err == nil && down[victim] && !processAlive(jvm)
	})
	for range 2 { // idempotent
		if err := f.Recover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitLong(t, ctx, kafkaReadyTimeout, victim+" Ready again on its own image, same pod", func() (string, bool) {
		p, st := containerStatus(ctx, cs, l.Namespace, victim)
		return st, p != nil && p.UID == before.UID && kube.PodReady(p) && p.Status.ContainerStatuses[0].Image == before.Spec.Containers[0].Image
	})
	p, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Annotations[chaos.LedgerAnnotation]; ok {
		t.Errorf("%s keeps a ledger after Recover: %s", victim, p.Annotations[chaos.LedgerAnnotation])
	}
}
