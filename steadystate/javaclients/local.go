package javaclients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The local clients' waits: a JVM's start and the group's first
// assignment, a tool's end once asked to stop (it flushes, commits and
// leaves), and how often they are looked at.
const (
	LocalStartTimeout = 3 * time.Minute
	localStopTimeout  = time.Minute
	localPoll         = 500 * time.Millisecond
)

// LocalConfig runs Kafka's own Java clients as processes of this machine,
// against any bootstrap list (kafkachaos steadystate --java-members): a
// VerifiableProducer, idempotent with acks=all (ProducerSettings), and a
// group of VerifiableConsumers, or VerifiableShareConsumers for a share
// group, each record checked by a Verifier.
type LocalConfig struct {
	Java      string // the java command; "java" when empty
	Libs      string // a Kafka distribution's libs directory
	Bootstrap []string
	Topic     string
	Group     string
	Protocol  string // classic, consumer (KIP-848) or share (KIP-932)
	Members   int
	Rate      int    // the producer's records/s
	Dir       string // where the producer's settings file is written
	// Stderr gets the tools' log lines (WARN and above); nil drops them.
	Stderr io.Writer
}

// ShareProtocol, as LocalConfig.Protocol, makes the group a share group.
const ShareProtocol = "share"

// Local is a running set of local Java clients.
type Local struct {
	cfg     LocalConfig
	v       *Verifier
	prod    *localTool
	members []*localTool
	owned   []atomic.Int64 // by member: the partitions it owns, by its events
	acked   atomic.Int64
}

// localTool is one tool's process; done is closed once it has ended and
// its output is read, err then says how.
type localTool struct {
	name  string
	cmd   *exec.Cmd
	done  chan struct{}
	err   error
	asked atomic.Bool // it was asked to stop
}

// StartLocal starts the members of cfg's group, waits until the group
// owns every partition of the topic (start has one offset per partition;
// a share group's assignment is read from the brokers through adm), then
// starts the producer. v judges what they print.
func StartLocal(ctx context.Context, cfg LocalConfig, v *Verifier, adm *kadm.Client, partitions int) (*Local, error) {
	if cfg.Java == "" {
		cfg.Java = "java"
	}
	l := &Local{cfg: cfg, v: v, owned: make([]atomic.Int64, cfg.Members)}
	for i := range cfg.Members {
		m, err := l.startMember(ctx, i)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.members = append(l.members, m)
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, localPoll, LocalStartTimeout, true, func(ctx context.Context) (bool, error) {
		if last = l.ended(); last != nil {
			return false, last
		}
		if cfg.Protocol == ShareProtocol {
			last = ShareGroupReady(ctx, adm, cfg.Group, cfg.Topic, cfg.Members, partitions)
		} else {
			last = GroupOwns(l.owned, partitions)
		}
		return last == nil, nil
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("javaclients: the Java group did not own every partition within %s: %w (last: %v)", LocalStartTimeout, err, last)
	}
	props := filepath.Join(cfg.Dir, "producer.properties")
	if err := os.WriteFile(props, []byte(ProducerSettings), 0o644); err != nil {
		l.Close()
		return nil, fmt.Errorf("javaclients: the producer's settings: %w", err)
	}
	l.prod, err = l.start(ctx, "producer", ProducerClass, l.producerEvent, ProducerArgs(cfg.Bootstrap, cfg.Topic, cfg.Rate, "1", props)...)
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// startMember starts member i of the group.
func (l *Local) startMember(ctx context.Context, i int) (*localTool, error) {
	name := fmt.Sprintf("member-%d", i)
	args := ConsumerArgs(l.cfg.Bootstrap, l.cfg.Topic, l.cfg.Group, l.cfg.Protocol)
	return l.start(ctx, name, ConsumerClassOf(l.cfg.Protocol), func(e Event) {
		switch e.Name {
		case PartitionsAssigned:
			l.owned[i].Add(int64(len(e.Partitions)))
		case PartitionsRevoked:
			l.owned[i].Add(-int64(len(e.Partitions)))
		}
		l.v.Consumer(name, e)
	}, args...)
}

func (l *Local) producerEvent(e Event) {
	if e.Name == ProducerSendOK {
		l.acked.Add(1)
	}
	l.v.Producer(e)
}

// start runs one tool, its events to fn; it dies with this process.
func (l *Local) start(ctx context.Context, name, class string, fn func(Event), args ...string) (*localTool, error) {
	cmd := Command(ctx, l.cfg.Java, l.cfg.Libs, class, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("javaclients: %s: %w", name, err)
	}
	cmd.Stderr = l.cfg.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("javaclients: start the %s (%s): %w", name, class, err)
	}
	t := &localTool{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		rerr := Read(out, fn)
		t.err = errors.Join(rerr, cmd.Wait())
	}()
	return t, nil
}

// GroupOwns says whether a group whose members own owned partitions (by
// slot, as their events said) owns all partitions of the topic, each
// member some (with members <= partitions).
func GroupOwns(owned []atomic.Int64, partitions int) error {
	var total int64
	each := make([]string, len(owned))
	idle := false
	for i := range owned {
		n := owned[i].Load()
		total += n
		idle = idle || n == 0
		each[i] = fmt.Sprint(n)
	}
	if int(total) != partitions || idle && len(owned) <= partitions {
		return fmt.Errorf("the members own %s of %d partitions", strings.Join(each, ", "), partitions)
	}
	return nil
}

// ended says which tool ended unasked, if any.
func (l *Local) ended() error {
	for _, t := range append([]*localTool{l.prod}, l.members...) {
		if t == nil || t.asked.Load() {
			continue
		}
		select {
		case <-t.done:
			return fmt.Errorf("the %s ended unasked: %v", t.name, t.err)
		default:
		}
	}
	return nil
}

// stop asks t to end (SIGTERM: the tool closes its client, printing its
// last events) and waits; past localStopTimeout it is killed.
func (t *localTool) stop() error {
	t.asked.Store(true)
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-t.done:
	case <-time.After(localStopTimeout):
		_ = t.cmd.Process.Kill()
		<-t.done
		return fmt.Errorf("the %s did not end within %s of SIGTERM", t.name, localStopTimeout)
	}
	var exit *exec.ExitError
	if errors.As(t.err, &exit) && exit.ExitCode() == 143 { // 128 + SIGTERM: the JVM's exit after its shutdown hooks
		return nil
	}
	if t.err != nil {
		return fmt.Errorf("the %s: %w", t.name, t.err)
	}
	return nil
}

// Finish stops the producer, waits up to timeout until the group has read
// every record below the topic's end offsets (a share group: until the
// brokers count every record done), stops the members, and returns the
// verdict, with what kept the run from being judged whole.
func (l *Local) Finish(ctx context.Context, adm *kadm.Client, timeout time.Duration) Result {
	var incomplete []string
	note := func(err error) {
		if err != nil {
			incomplete = append(incomplete, err.Error())
		}
	}
	note(l.ended())
	note(l.prod.stop())
	var last error
	err := wait.PollUntilContextTimeout(ctx, localPoll, timeout, true, func(ctx context.Context) (bool, error) {
		end, err := EndOffsets(ctx, adm, l.cfg.Topic)
		switch {
		case err != nil:
			last = err
		case !l.v.ProcessedThrough(end):
			last = fmt.Errorf("the group has not read up to %v", end)
		case l.cfg.Protocol == ShareProtocol:
			last = ShareDone(ctx, adm, l.cfg.Group, l.cfg.Topic, end)
		default:
			last = nil
		}
		return last == nil, nil
	})
	if err != nil {
		note(fmt.Errorf("the Java group's drain did not end within %s: %v", timeout, last))
	}
	for _, m := range l.members {
		note(m.stop())
	}
	res := l.v.Result(time.Now())
	if l.acked.Load() == 0 {
		incomplete = append(incomplete, "the Java producer had no record acknowledged: the run shows nothing")
	}
	res.Incomplete = incomplete
	return res
}

// Close stops every tool still running, side by side.
func (l *Local) Close() {
	var wg sync.WaitGroup
	for _, t := range append([]*localTool{l.prod}, l.members...) {
		if t != nil {
			wg.Go(func() { _ = t.stop() })
		}
	}
	wg.Wait()
}

// EndOffsets lists topic's end offsets by partition; an error in any
// partition's is the call's.
func EndOffsets(ctx context.Context, adm *kadm.Client, topic string) ([]int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("javaclients: end offsets of %s: %w", topic, err)
	}
	out := make([]int64, len(ends[topic]))
	for p, o := range ends[topic] {
		if int(p) >= len(out) {
			return nil, fmt.Errorf("javaclients: partition %d of %d listed", p, len(out))
		}
		out[p] = o.Offset
	}
	return out, nil
}
