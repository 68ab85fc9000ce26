package javaclients

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/localkafka/localkafkatest"
)

// Limits of the end-to-end run: 3 broker JVMs and 3 client JVMs on 2 cores.
const (
	clusterTimeout = 4 * time.Minute
	runTimeout     = 4 * time.Minute
	drainTimeout   = 2 * time.Minute
	drainPoll      = 500 * time.Millisecond
	javaRecords    = 3000
	javaRate       = 500 // records/s
	javaPartitions = 3
)

// tool is a running Java tool whose events go to fn.
type tool struct {
	cmd  *exec.Cmd
	done chan error
}

func startTool(t *testing.T, ctx context.Context, dist kafkadist.Dist, class string, fn func(Event), args ...string) *tool {
	t.Helper()
	cmd := Command(ctx, "java", dist.LibsDir, class, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &tailWriter{t: t, name: filepath.Ext(class)[1:]}
	cmd.Stderr = stderr
	// The tool dies with the test, even when go test kills it on a timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", class, err)
	}
	tl := &tool{cmd: cmd, done: make(chan error, 1)}
	go func() {
		rerr := Read(out, fn)
		tl.done <- errors.Join(rerr, cmd.Wait())
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-tl.done
		if t.Failed() {
			stderr.mu.Lock()
			t.Logf("the last of %s's standard error:\n%s", stderr.name, stderr.last)
			stderr.mu.Unlock()
		}
	})
	return tl
}

// tailWriter logs a tool's standard error only when the test fails.
type tailWriter struct {
	t    *testing.T
	name string
	mu   sync.Mutex
	last []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = append(w.last, b...)
	if len(w.last) > 8<<10 {
		w.last = w.last[len(w.last)-8<<10:]
	}
	return len(b), nil
}

// TestJavaClientsVerified runs Kafka's own VerifiableProducer and two
// VerifiableConsumers of one group (KIP-848's protocol) against three real
// brokers, stops one consumer half-way so that the other takes its
// partitions over, and checks every record and the group's history.
func TestJavaClientsVerified(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), clusterTimeout+runTimeout+drainTimeout)
	defer cancel()
	c, dist := localkafkatest.Start(t, clusterTimeout)
	boot := c.Bootstrap()
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	const topic = "java-verified"
	if _, err := adm.CreateTopic(ctx, javaPartitions, 3, map[string]*string{"min.insync.replicas": ptr("2")}, topic); err != nil {
		t.Fatal(err)
	}

	v := NewVerifier(topic, time.Now(), make([]int64, javaPartitions))
	bootstrap := boot[0]
	for _, b := range boot[1:] {
		bootstrap += "," + b
	}
	// As applications run the producer: idempotent, retrying, acks=all.
	// The tool itself sets retries=0, which turns idempotence off.
	props := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(props, []byte("enable.idempotence=true\nacks=all\nretries=2147483647\nmax.in.flight.requests.per.connection=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var owning [2]atomic.Int64 // partitions each consumer owns
	consumer := func(i int) *tool {
		name := fmt.Sprintf("consumer-%d", i)
		return startTool(t, ctx, dist, ConsumerClass, func(e Event) {
			switch e.Name {
			case PartitionsAssigned:
				owning[i].Add(int64(len(e.Partitions)))
			case PartitionsRevoked:
				owning[i].Add(-int64(len(e.Partitions)))
			}
			v.Consumer(name, e)
		}, "--bootstrap-server", bootstrap, "--topic", topic, "--group-id", "java-group", "--group-protocol", "consumer", "--verbose")
	}
	c0, c1 := consumer(0), consumer(1)
	// Both members own partitions before the load starts.
	err = wait.PollUntilContextTimeout(ctx, drainPoll, runTimeout, true, func(context.Context) (bool, error) {
		return owning[0].Load() > 0 && owning[1].Load() > 0, nil
	})
	if err != nil {
		t.Fatalf("the consumers own %d and %d partitions: %v", owning[0].Load(), owning[1].Load(), err)
	}
	var acked atomic.Int64
	prod := startTool(t, ctx, dist, ProducerClass, func(e Event) {
		if e.Name == ProducerSendOK {
			acked.Add(1)
		}
		v.Producer(e)
	}, "--bootstrap-server", bootstrap, "--topic", topic, "--max-messages", fmt.Sprint(javaRecords),
		"--throughput", fmt.Sprint(javaRate), "--value-prefix", "1", "--producer.config", props)

	// Half-way, consumer-1 leaves (SIGTERM: the tool closes its consumer).
	err = wait.PollUntilContextTimeout(ctx, drainPoll, runTimeout, true, func(context.Context) (bool, error) { return acked.Load() >= javaRecords/2, nil })
	if err != nil {
		t.Fatalf("the producer acked %d of %d records: %v", acked.Load(), javaRecords, err)
	}
	_ = c1.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-prod.done:
		prod.done <- err
		if err != nil {
			t.Fatalf("the producer: %v", err)
		}
	case <-time.After(runTimeout):
		t.Fatalf("the producer did not finish: %d acked", acked.Load())
	}
	end, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	target := make([]int64, javaPartitions)
	end.Each(func(o kadm.ListedOffset) { target[o.Partition] = o.Offset })
	err = wait.PollUntilContextTimeout(ctx, drainPoll, drainTimeout, true, func(context.Context) (bool, error) { return v.ProcessedThrough(target), nil })
	if err != nil {
		t.Fatalf("the group did not read up to %v: %v", target, err)
	}
	_ = c0.cmd.Process.Signal(syscall.SIGTERM)
	select { // its last events (a commit, its partitions revoked) before the verdict
	case err := <-c0.done:
		c0.done <- err
	case <-time.After(drainTimeout):
		t.Error("consumer-0 did not stop after SIGTERM")
	}
	res := v.Result(time.Now())
	t.Logf("java: %d acked, group: acked %d consumed %d redelivered %d, %d assignments %d revocations; problems %q",
		acked.Load(), res.Group.Acked, res.Group.Consumed, res.Group.Redelivered, res.Group.Assignments, res.Group.Revocations, res.Problems())
	if !res.Clean() {
		t.Errorf("the Java clients' run found anomalies: %q", res.Problems())
	}
	if res.Group.Acked != javaRecords || res.Group.Consumed != javaRecords {
		t.Errorf("acked %d consumed %d, want %d each", res.Group.Acked, res.Group.Consumed, javaRecords)
	}
	if res.Group.Revocations == 0 {
		t.Error("no partition was revoked: the hand-over from the consumer that left was not exercised")
	}
}

func ptr(s string) *string { return &s }
