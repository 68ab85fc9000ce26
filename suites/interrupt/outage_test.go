package interrupt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/localcluster"
)

// apiOutage is how long the API server stays down: longer than the drain's
// hold (outageConfig), so the recovery falls in the outage.
const apiOutage = 25 * time.Second

// outageConfig holds the drain for 10 s.
const outageConfig = "timing: {hold: 10s}\n"

// apiOutageDuringDrain stops kube-apiserver while the node-drain spec holds
// its drain, and starts it again after apiOutage, past the end of the
// hold: the spec's recovery (the uncordon) finds the API refusing
// connections. It must wait for the API (chaos.RecoverRetrying), then
// uncordon, say that the API was out, and leave no cordoned node and no
// ledger entry, with no help from the suite's final sweep or from
// kafkachaos recover.
func apiOutageDuringDrain(ctx context.Context, t *testing.T, c *localcluster.Cluster, root, suite string, env []string, state, bin string) {
	t.Run("the drain is recovered after an API server outage that outlasts its hold", func(t *testing.T) {
		config := filepath.Join(state, "outage.yaml")
		if err := os.WriteFile(config, []byte(outageConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-test.v", "-ginkgo.v", "-ginkgo.label-filter=node-drain", "-kafkachaos.config=" + config,
			"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + bin}
		sr := startUntil(ctx, t, root, suite, args, env, holdingTheDrain)
		if err := c.StopAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver stopped for %s", apiOutage)
		select {
		case <-time.After(apiOutage):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
		if err := c.Up(ctx); err != nil {
			t.Fatalf("starting kube-apiserver again: %v", err)
		}
		sr.wait(t)
		out := sr.out.String()
		if !strings.Contains(out, "the Kubernetes API did not serve the recovery") {
			t.Error("the suite did not say that the recovery waited for the API")
		}
		if strings.Contains(out, "faults the specs did not recover themselves") {
			t.Error("the spec did not recover the drain; the suite's sweep had to")
		}
		cs := clientset(t, c)
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
