package javaclients

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/localkafka"
	"github.com/kafkachaos/kafkachaos/internal/localkafka/localkafkatest"
	"github.com/kafkachaos/kafkachaos/steadystate/txn"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// The Java copier's run: its input, its members, and how often a dead
// member is replaced.
const (
	copyRecords  = 6000
	copyMembers  = 2
	copyRestarts = 6
	copyGroup    = "java-copy"
	copyInput    = "java-copy-in"
	copyOutput   = "java-copy-out"
	copyRun      = uint64(0x6a617661) // the end marker's run ID
	copyTxnSize  = "100"
	// memberBackoff is the least time between two starts of a member: a
	// copier whose partitions are done exits at once.
	memberBackoff = 5 * time.Second
)

// TestJavaTransactionalCopier runs Kafka's own TransactionalMessageCopier,
// two members of one group (--group-mode, --use-group-metadata, random
// aborts), over an input of copyRecords records on three real brokers, as
// Kafka's group_mode_transactions_test does, and kills and restarts one
// broker half-way. Checks that apply to the Java run, whose records carry no
// transaction identity: every input record is in the output exactly once
// at read_committed (copied-twice, not-copied), and the read_uncommitted
// control saw the aborted copies (else the run is inconclusive). Aborted
// reads and torn transactions of single records cannot be told apart from
// duplicates here; the franz-go workload checks those.
func TestJavaTransactionalCopier(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), clusterTimeout+runTimeout+drainTimeout)
	defer cancel()
	c, dist := localkafkatest.Start(t, clusterTimeout)
	boot := c.Bootstrap()
	opts := []kgo.Opt{kgo.SeedBrokers(boot...)}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{copyInput, copyOutput} {
		if _, err := adm.CreateTopic(ctx, javaPartitions, 3, map[string]*string{"min.insync.replicas": ptr("2")}, topic); err != nil {
			t.Fatal(err)
		}
	}
	where := seedInput(t, ctx, cl)
	zero := make([]int64, javaPartitions)
	chk := txncheck.NewCopyChecker(zero)
	var uncommitted atomic.Int64
	committedDone := readOutput(t, ctx, opts, kgo.ReadCommitted(), func(r *kgo.Record) {
		in, ok := where[string(r.Value)]
		if !ok {
			t.Errorf("output partition %d offset %d holds %q, no input record", r.Partition, r.Offset, r.Value)
			return
		}
		chk.Output(in.partition, in.offset, r.Partition, r.Offset, time.Now())
	})
	uncommittedDone := readOutput(t, ctx, opts, kgo.ReadUncommitted(), func(*kgo.Record) { uncommitted.Add(1) })

	members := runCopiers(t, ctx, dist, strings.Join(boot, ","))
	end := make([]int64, javaPartitions)
	ends, err := adm.ListEndOffsets(ctx, copyInput)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) { end[o.Partition] = o.Offset })
	// Progress is what the read_committed reader saw copied: an admin
	// client's OffsetFetch can fail while the group's coordinator is the
	// broker killed.
	copied := func(target []int64) func() bool { return func() bool { return chk.Copied(target) } }
	bounceMidway(t, ctx, c, members, end, copied)
	members.until(t, ctx, "all", copied(end))
	members.stop()

	if err := txn.WriteEndMarker(ctx, opts, copyOutput, javaPartitions, copyRun); err != nil {
		t.Fatal(err)
	}
	for _, done := range []chan struct{}{committedDone, uncommittedDone} {
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("a reader did not reach the end marker")
		}
	}
	r := chk.Result(end, true)
	t.Logf("java copier: %d inputs, %d copied, %d members started; the read_uncommitted control read %d records; problems %q",
		r.Inputs, r.Copied, members.started.Load(), uncommitted.Load(), r.Problems())
	if !r.Clean() || r.Inputs != copyRecords {
		t.Errorf("the copy is not exactly once: %q %v", r.Problems(), r.Witnesses)
	}
	if uncommitted.Load() <= copyRecords {
		t.Errorf("inconclusive: the read_uncommitted control read %d records, no more than the %d inputs, so no abort showed", uncommitted.Load(), copyRecords)
	}
}

// loc is where a record is.
type loc struct {
	partition int32
	offset    int64
}

// seedInput writes copyRecords records of distinct values to the input,
// idempotently, and returns where each value is.
func seedInput(t *testing.T, ctx context.Context, cl *kgo.Client) map[string]loc {
	t.Helper()
	recs := make([]*kgo.Record, copyRecords)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: copyInput, Partition: int32(i % javaPartitions), Value: fmt.Appendf(nil, "copy-%d", i)}
	}
	res := cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	where := make(map[string]loc, copyRecords)
	for _, r := range res {
		where[string(r.Record.Value)] = loc{r.Record.Partition, r.Record.Offset}
	}
	return where
}

// readOutput reads the output from its start at level, giving fn each
// record, until the end marker is on every partition; the channel closes
// then.
func readOutput(t *testing.T, ctx context.Context, opts []kgo.Opt, level kgo.IsolationLevel, fn func(*kgo.Record)) chan struct{} {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.FetchIsolationLevel(level), kgo.ConsumeTopics(copyOutput),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	done, exited := make(chan struct{}), make(chan struct{})
	rctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { cancel(); <-exited; cl.Close() })
	go func() {
		defer close(exited)
		ended := map[int32]bool{}
		for rctx.Err() == nil && len(ended) < javaPartitions {
			cl.PollFetches(rctx).EachRecord(func(r *kgo.Record) {
				if txn.IsEndMarker(r.Value, copyRun) {
					ended[r.Partition] = true
					return
				}
				fn(r)
			})
		}
		if len(ended) == javaPartitions {
			close(done)
		}
	}()
	return done
}

// copiers are the running members of the copy group.
type copiers struct {
	t         *testing.T
	dist      kafkadist.Dist
	bootstrap string
	tools     []*tool
	started   atomic.Int64
	lastStart time.Time
}

func runCopiers(t *testing.T, ctx context.Context, dist kafkadist.Dist, bootstrap string) *copiers {
	cs := &copiers{t: t, dist: dist, bootstrap: bootstrap}
	for range copyMembers {
		cs.start(ctx)
	}
	return cs
}

// start starts one more member; its transactional ID is its own, as
// each member of Kafka's test has one.
func (cs *copiers) start(ctx context.Context) {
	n := cs.started.Add(1)
	cs.lastStart = time.Now()
	cmd := Command(ctx, "java", cs.dist.LibsDir, CopierClass,
		"--broker-list", cs.bootstrap, "--input-topic", copyInput, "--input-partition", "0", "--output-topic", copyOutput,
		"--consumer-group", copyGroup, "--group-mode", "--use-group-metadata", "--enable-random-aborts",
		"--transaction-size", copyTxnSize, "--transactional-id", fmt.Sprintf("java-copier-%d", n))
	// It prints only progress and its end, as JSON lines: kept for a
	// failure's log.
	out := &tailWriter{t: cs.t, name: fmt.Sprintf("copier %d", n)}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		cs.t.Fatalf("starting the copier: %v", err)
	}
	tl := &tool{cmd: cmd, done: make(chan error, 1)}
	go func() { tl.done <- cmd.Wait() }()
	cs.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-tl.done
		if cs.t.Failed() {
			out.mu.Lock()
			cs.t.Logf("the last of %s's output:\n%s", out.name, out.last)
			out.mu.Unlock()
		}
	})
	cs.tools = append(cs.tools, tl)
}

// until waits for done, replacing the members that exited (a copier
// exits when it has copied its partitions to their end at its start, or on
// an error it does not recover from) up to copyRestarts times.
func (cs *copiers) until(t *testing.T, ctx context.Context, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, drainPoll, runTimeout, true, func(ctx context.Context) (bool, error) {
		if done() {
			return true, nil
		}
		alive := 0
		for _, tl := range cs.tools {
			select {
			case err := <-tl.done:
				tl.done <- err
			default:
				alive++
			}
		}
		if alive == 0 && cs.started.Load() < copyMembers+copyRestarts && time.Since(cs.lastStart) > memberBackoff {
			cs.start(ctx)
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the output does not hold %s of the input (%d members started): %v", what, cs.started.Load(), err)
	}
	t.Logf("the output holds %s of the input (%d members started)", what, cs.started.Load())
}

// stop ends every member and waits until each has exited (SIGKILL after
// drainTimeout): a copy committed after the end marker would be past what
// the readers read.
func (cs *copiers) stop() {
	for _, tl := range cs.tools {
		_ = tl.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, tl := range cs.tools {
		select {
		case err := <-tl.done:
			tl.done <- err
		case <-time.After(drainTimeout):
			_ = tl.cmd.Process.Kill()
		}
	}
}

// bounceMidway kills a broker when the output holds a third of the input,
// and restarts it at two thirds.
func bounceMidway(t *testing.T, ctx context.Context, c *localkafka.Cluster, cs *copiers, end []int64, copied func([]int64) func() bool) {
	t.Helper()
	share := func(num int64) []int64 {
		out := make([]int64, len(end))
		for i, e := range end {
			out[i] = e * num / 3
		}
		return out
	}
	wait1 := func(what string, target []int64) {
		cs.until(t, ctx, what, copied(target))
	}
	wait1("a third", share(1))
	victim := c.Nodes()[1].ID
	t.Logf("killing broker %d", victim)
	if err := c.Kill(ctx, victim); err != nil {
		t.Fatal(err)
	}
	wait1("two thirds", share(2))
	t.Logf("restarting broker %d", victim)
	if err := c.Restart(ctx, victim); err != nil {
		t.Fatal(err)
	}
}
