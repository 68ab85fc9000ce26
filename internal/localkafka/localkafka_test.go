package localkafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
)

// Generous limits for 3 JVMs on 2 cores.
const (
	startTimeout   = 3 * time.Minute
	rejoinTimeout  = 3 * time.Minute
	clientTimeout  = time.Minute
	dumpLogLines   = 60
	testTopic      = "localkafka-test"
	testPartitions = 6
	testRecords    = 100
)

// startCluster starts a real cluster for t and registers its cleanup: the
// logs are dumped if t failed, then every JVM is killed. Without fetched
// Kafka jars it skips, unless CI is set, where that is a failure.
func startCluster(t *testing.T, opts ...Option) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: -short, and this test runs real Kafka brokers")
	}
	c, err := New(append([]Option{WithDir(t.TempDir())}, opts...)...)
	if errors.Is(err, kafkadist.ErrNotFetched) && os.Getenv("CI") == "" {
		t.Skipf("skipping: %v (set CI=true to make this a failure)", err)
	}
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			_ = c.DumpLogs(&b, dumpLogLines)
			t.Logf("node logs:\n%s", b.String())
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	began := time.Now()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatalf("WaitHealthy() after Start: %v", err)
	}
	t.Logf("MEASURE %d nodes started and healthy in %v", len(c.Nodes()), time.Since(began).Round(time.Millisecond))
	return c
}

// client returns a franz-go client of c, closed when t ends.
func client(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}, opts...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient() error = %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// logRSS logs each JVM's resident set size, from /proc.
func logRSS(t *testing.T, c *Cluster, when string) {
	t.Helper()
	var parts []string
	for _, n := range c.Nodes() {
		parts = append(parts, fmt.Sprintf("node %d: %s", n.ID, rss(n.PID)))
	}
	t.Logf("MEASURE RSS %s: %s", when, strings.Join(parts, ", "))
}

func rss(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return fmt.Sprintf("%d MiB", kb/1024)
		}
	}
	return "unknown"
}

func TestKilledNodeRejoinsISR(t *testing.T) {
	c := startCluster(t)
	logRSS(t, c, "after start")

	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	adm := kadm.NewClient(client(t, c))
	created, err := adm.CreateTopic(ctx, testPartitions, 3, nil, testTopic)
	if err != nil || created.Err != nil {
		t.Fatalf("CreateTopic(%s, RF 3) = %v, %v", testTopic, created.Err, err)
	}

	producer := client(t, c, kgo.DefaultProduceTopic(testTopic), kgo.RequiredAcks(kgo.AllISRAcks()))
	want := map[string]bool{}
	var records []*kgo.Record
	for i := range testRecords {
		v := fmt.Sprintf("record-%03d", i)
		want[v] = true
		records = append(records, kgo.StringRecord(v))
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("producing %d records: %v", testRecords, err)
	}

	if err := c.Kill(ctx, 1); err != nil {
		t.Fatalf("Kill(1) error = %v", err)
	}
	began := time.Now()
	if err := c.Restart(ctx, 1); err != nil {
		t.Fatalf("Restart(1) error = %v", err)
	}
	rejoinCtx, cancelRejoin := context.WithTimeout(t.Context(), rejoinTimeout)
	defer cancelRejoin()
	if err := c.WaitHealthy(rejoinCtx); err != nil {
		t.Fatalf("WaitHealthy() after killing and restarting node 1: %v", err)
	}
	t.Logf("MEASURE node 1 killed, restarted and back in every ISR in %v", time.Since(began).Round(time.Millisecond))

	// A fresh client has no cached metadata: this is what Kafka says now.
	md, err := kadm.NewClient(client(t, c)).Metadata(ctx, testTopic)
	if err != nil {
		t.Fatalf("Metadata() error = %v", err)
	}
	md.Topics[testTopic].Partitions.Sorted()
	for _, p := range md.Topics[testTopic].Partitions.Sorted() {
		if p.Err != nil || !containsID(p.ISR, 1) || len(p.ISR) != 3 {
			t.Errorf("%s-%d: ISR %v, replicas %v, err %v; want node 1 back in a full ISR", testTopic, p.Partition, p.ISR, p.Replicas, p.Err)
		}
	}

	consumer := client(t, c, kgo.ConsumeTopics(testTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for len(want) > 0 {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consuming: %d of %d records missing after the restart, e.g. %v: %v", len(want), testRecords, anyKey(want), err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Errorf("fetch %s-%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			if !want[string(r.Value)] {
				t.Errorf("unexpected or duplicate record %q at %s-%d@%d", r.Value, r.Topic, r.Partition, r.Offset)
			}
			delete(want, string(r.Value))
		})
	}
	logRSS(t, c, "after the restart")

	began = time.Now()
	if err := c.Restart(ctx, 2); err != nil {
		t.Fatalf("Restart(2) (graceful) error = %v", err)
	}
	if err := c.WaitHealthy(rejoinCtx); err != nil {
		t.Fatalf("WaitHealthy() after a graceful restart of node 2: %v", err)
	}
	t.Logf("MEASURE node 2 stopped gracefully, restarted and back in every ISR in %v", time.Since(began).Round(time.Millisecond))
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func anyKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

func TestSeparateControllerRestarts(t *testing.T) {
	c := startCluster(t, WithNodes(2), WithSeparateControllers(1))
	logRSS(t, c, "after start")

	ctx, cancel := context.WithTimeout(t.Context(), rejoinTimeout)
	defer cancel()
	began := time.Now()
	if err := c.Kill(ctx, ControllerIDBase); err != nil {
		t.Fatalf("Kill(%d) error = %v", ControllerIDBase, err)
	}
	if err := c.Restart(ctx, ControllerIDBase); err != nil {
		t.Fatalf("Restart(%d) error = %v", ControllerIDBase, err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatalf("WaitHealthy() after killing and restarting the controller: %v", err)
	}
	t.Logf("MEASURE controller killed, restarted and quorum healthy in %v", time.Since(began).Round(time.Millisecond))
	h, err := c.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Quorum.VoterIDs(); len(got) != 1 || got[0] != ControllerIDBase {
		t.Errorf("voters = %v; want only the controller %d", got, ControllerIDBase)
	}
}
