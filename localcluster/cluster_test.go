package localcluster

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Timeouts of the control-plane test.
const (
	upTimeout   = 5 * time.Minute
	downTimeout = time.Minute
)

// TestControlPlaneUpAndDown brings the real control plane up in a temp state
// dir, uses it through client-go, takes it down, and checks nothing is left
// running.
func TestControlPlaneUpAndDown(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs the built control plane")
	}
	c, err := New(WithStateDir(t.TempDir()), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.binaries(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("control plane not built (CI would fail here): %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
		defer cancel()
		if err := c.Down(ctx, false); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), upTimeout)
	defer cancel()
	start := time.Now()
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane up in %s", time.Since(start).Round(time.Millisecond))
	if err := c.Up(ctx); err != nil {
		t.Fatalf("second Up (idempotent): %v", err)
	}

	cs, err := c.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kafkachaos-cp-test"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != KubernetesVersion {
		t.Errorf("server version %v, %v; want %s", v, err, KubernetesVersion)
	}

	pids := map[string]int{}
	for _, s := range c.Status() {
		if !s.Running {
			t.Errorf("%s not running after Up", s.Name)
		}
		pids[s.Name] = s.PID
	}
	if err := c.Down(ctx, false); err != nil {
		t.Fatalf("down: %v", err)
	}
	for name, pid := range pids {
		if _, err := os.Stat("/proc/" + itoa(pid)); err == nil && !zombie(pid) {
			t.Errorf("%s (pid %d) still running after Down", name, pid)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
