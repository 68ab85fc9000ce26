package localcluster

import (
	"context"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/pidfile"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// checkPause pauses one broker through pods/exec, as the pause fault does
// on any cluster, and checks that it froze that broker's JVM and no other
// (the local cluster's pods share the host's PID namespace), then that
// Recover thaws it, drops its ledger entry, and can run again.
func checkPause(t *testing.T, ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, l manifests.Layout) {
	t.Helper()
	exec, err := chaos.NewExec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]int{} // broker pod -> its JVM's PID
	for i := range 3 {
		name := l.StatefulSet + "-" + strconv.Itoa(i)
		p, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pods[name] = containerPID(p); pods[name] == 0 {
			t.Fatalf("%s has no process ID in its status", name)
		}
	}
	victim := l.StatefulSet + "-2"
	f := &chaos.Pause{Scope: chaos.Scope{Client: cs, Namespace: l.Namespace, RunID: "e2e"}, Exec: exec, Pod: victim}
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Recover(context.Background()) }) // a failure below must not leave a frozen JVM
	for name, pid := range pods {
		state, err := pidfile.State(pid)
		if err != nil {
			t.Fatalf("%s (PID %d): %v", name, pid, err)
		}
		if frozen := state == "T"; frozen != (name == victim) {
			t.Errorf("after pausing %s: %s (PID %d) is in state %s", victim, name, pid, state)
		}
	}
	if p, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, victim, metav1.GetOptions{}); err != nil || !strings.Contains(p.Annotations[chaos.LedgerAnnotation], chaos.KindPause) {
		t.Errorf("%s's ledger after the pause: %q, %v; want a %s entry", victim, p.Annotations[chaos.LedgerAnnotation], err, chaos.KindPause)
	}
	for range 2 { // idempotent
		if err := f.Recover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if state, err := pidfile.State(pods[victim]); err != nil || state == "T" {
		t.Errorf("%s (PID %d) after Recover: state %q, %v; want running", victim, pods[victim], state, err)
	}
	p, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Annotations[chaos.LedgerAnnotation]; ok {
		t.Errorf("%s keeps a ledger after Recover: %s", victim, p.Annotations[chaos.LedgerAnnotation])
	}
	if p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("%s restarted during the pause (%d restarts): the fault froze it, it must not kill it", victim, p.Status.ContainerStatuses[0].RestartCount)
	}
}
