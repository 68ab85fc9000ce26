package localkafkatest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/localkafka"
)

// dumpLogLines is how much of each node's log a failed test shows.
const dumpLogLines = 40

// Start starts a cluster of Kafka's default version for t, healthy within
// timeout, and stops it when t ends, showing the nodes' logs if t failed.
// It skips with -short, and where the jars are not fetched unless CI is
// set, where that is a failure. It returns the cluster and its jars (for
// a test that also runs Kafka's Java tools).
func Start(t *testing.T, timeout time.Duration, opts ...localkafka.Option) (*localkafka.Cluster, kafkadist.Dist) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test runs real Kafka brokers")
	}
	dist, err := kafkadist.Find(kafkadist.DefaultVersion)
	if errors.Is(err, kafkadist.ErrNotFetched) && os.Getenv("CI") == "" {
		t.Skipf("skipping: %v (set CI=true to make this a failure)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	c, err := localkafka.New(append([]localkafka.Option{localkafka.WithDir(t.TempDir()), localkafka.WithLibsDir(dist.LibsDir)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			_ = c.DumpLogs(&b, dumpLogLines)
			t.Logf("node logs:\n%s", b.String())
		}
		if err := c.Close(); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	return c, dist
}
