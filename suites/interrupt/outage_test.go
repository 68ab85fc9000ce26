package interrupt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/localcluster"
)

// apiOutage is how long the outage lasts (kube-apiserver or etcd down),
// from the moment the drained node is empty: past the end of the drain's hold (outageConfig),
// so the recovery falls in the outage.
const apiOutage = 25 * time.Second

// outageConfig holds the drain for 20 s, long enough for the evicted
// broker's shutdown (about 6 s) to happen with the API up.
const outageConfig = "timing: {hold: 20s}\n"

// controlPlaneOutage is a failure of the local cluster's control plane,
// from stop until Up starts what it stopped again.
type controlPlaneOutage struct {
	// name says what fails, for the subtest's name.
	name string
	stop func(context.Context, *localcluster.Cluster) error
	// refused: the API refuses connections while it lasts, so the
	// recovery must have failed and said so. With etcd stopped the API
	// server is up and a request may wait out the outage instead.
	refused bool
}

// The outages the drain is recovered through: kube-apiserver stopped (in
// make test), and etcd stopped under it (when etcdOutageEnv is set).
func apiServerStopped() controlPlaneOutage {
	return controlPlaneOutage{name: "an API server outage", stop: func(ctx context.Context, c *localcluster.Cluster) error { return c.StopAPIServer(ctx) }, refused: true}
}

func etcdStopped() controlPlaneOutage {
	return controlPlaneOutage{name: "an etcd outage (the API server up, unable to serve)", stop: func(ctx context.Context, c *localcluster.Cluster) error { return c.StopEtcd(ctx) }}
}

// etcdOutageEnv, set to anything, adds the etcd outage to the test.
const etcdOutageEnv = "KAFKACHAOS_ETCD_OUTAGE"

// outageDuringDrain stops part of the control plane (kube-apiserver, or
// etcd under it) while the node-drain spec holds its drain, and starts it
// again after apiOutage, past the end of the hold: the spec's recovery
// (the uncordon) falls in the outage. It must wait for the API
// (chaos.RecoverRetrying), then uncordon, and leave no cordoned node and
// no ledger entry, with no help from the suite's final sweep or from
// kafkachaos recover; when the API refused connections it must say that
// it waited.
func outageDuringDrain(ctx context.Context, t *testing.T, o controlPlaneOutage, c *localcluster.Cluster, root, suite string, env []string, state, node string) {
	t.Run("the drain is recovered after "+o.name+" that outlasts its hold", func(t *testing.T) {
		config := filepath.Join(state, "outage.yaml")
		if err := os.WriteFile(config, []byte(outageConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-test.v", "-ginkgo.v", "-ginkgo.label-filter=node-drain", "-kafkachaos.config=" + config,
			"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + node}
		sr := startUntil(ctx, t, root, suite, args, env, holdingTheDrain)
		// The outage is aimed at the recovery: it begins once the evicted
		// broker has stopped and its pod object is gone. (Begun while the
		// pod still terminated, it once left the recreated pod Pending for
		// minutes: kube-scheduler logged "Scheduler cache is corrupted" for
		// the old pod's UID and never tried the new one.)
		cs := clientset(t, c)
		waitNodeEmpty(ctx, t, cs)
		if err := o.stop(ctx, c); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s for %s", o.name, apiOutage)
		select {
		case <-time.After(apiOutage):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
		if err := c.Up(ctx); err != nil {
			t.Fatalf("starting the control plane again: %v", err)
		}
		sr.wait(t)
		out := sr.out.String()
		if o.refused && !strings.Contains(out, "the Kubernetes API did not serve the recovery") {
			t.Error("the suite did not say that the recovery waited for the API")
		}
		if strings.Contains(out, "faults the specs did not recover themselves") {
			t.Error("the spec did not recover the drain; the suite's sweep had to")
		}
		if n := cordoned(ctx, t, cs); len(n) != 0 {
			t.Errorf("after the outage, nodes still cordoned: %v", n)
		}
		if l := ledgers(ctx, t, cs); len(l) != 0 {
			t.Errorf("after the outage, ledger entries left: %v", l)
		}
		if sr.cmd.ProcessState == nil || !sr.cmd.ProcessState.Success() {
			t.Errorf("the suite failed through the outage (%v): an API outage during a drain must not fail Kafka's checks", sr.cmd.ProcessState)
		}
	})
}

// waitNodeEmpty waits until the one cordoned node runs no pod of any
// namespace.
func waitNodeEmpty(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	var node string
	var on []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, nodeEmptyTimeout, true, func(ctx context.Context) (bool, error) {
		n := cordoned(ctx, t, cs)
		if len(n) != 1 {
			return false, fmt.Errorf("cordoned nodes %v, want the drained one", n)
		}
		node = n[0]
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return false, err
		}
		on = on[:0]
		for _, p := range pods.Items {
			on = append(on, p.Namespace+"/"+p.Name)
		}
		return len(on) == 0, nil
	})
	if err != nil {
		t.Fatalf("the drained node %s still runs %v: %v", node, on, err)
	}
}

// nodeEmptyTimeout bounds the wait for an evicted broker to stop: its
// graceful shutdown, within its 60 s grace period.
const nodeEmptyTimeout = 90 * time.Second
