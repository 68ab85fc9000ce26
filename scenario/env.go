package scenario

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
)

// Narrator tells what a story does: each step as it begins (Ginkgo's By),
// and log lines through Write (Ginkgo's GinkgoWriter).
type Narrator interface {
	io.Writer
	// By narrates a step.
	By(text string)
}

// Cleanups registers what must run once the caller is done with a story
// (Ginkgo's DeferCleanup): last registered first, also when the story
// fails half-way or is interrupted.
type Cleanups interface {
	// Defer registers fn, to be called with a context of its own (never
	// the story's), bounded by timeout when it is positive (NodeTimeout).
	// An error fn returns fails the caller.
	Defer(fn func(ctx context.Context) error, timeout time.Duration)
}

// Recorder keeps a story's outcome for the run's report.
type Recorder interface {
	// Spec names what the story runs in (report.json's spec).
	Spec() string
	// Record takes the outcome; it is called from a cleanup, so that a
	// story that fails half-way still has its row.
	Record(Outcome)
}

// Env is what a story runs against. The caller sets it up; a story only
// reads it.
type Env struct {
	// Kube is the identity the story acts with, and KubeConfig its REST
	// config (pods/portforward to the agents).
	Kube       kubernetes.Interface
	KubeConfig *rest.Config
	// Admin sets things up: it deploys the in-cluster agents, as it
	// deploys Kafka. Nil: Kube.
	Admin kubernetes.Interface
	// Exec is pods/exec as Kube.
	Exec chaos.Exec
	// Namespace is Kafka's; Selector narrows its broker pods by label, and
	// Flavor says how to read them.
	Namespace string
	Selector  string
	Flavor    brokers.Flavor
	// Bootstrap and KafkaOpts: how the story's own clients reach the
	// brokers.
	Bootstrap []string
	KafkaOpts []kgo.Opt
	// RunID tags the ledger entries of this run's faults.
	RunID string
	// DryRun makes a story plan its fault and stop (ErrSkipped).
	DryRun bool
	// ZooKeeperConnect is the brokers' zookeeper.connect in ZooKeeper
	// mode; "" in KRaft mode.
	ZooKeeperConnect string
	// Dial reaches the cluster's pods from this process by their cluster
	// names (the local cluster's hosts file). Nil: they cannot be reached,
	// and the ZooKeeper ensemble is not looked at.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LocalKubelets reads the stats summaries from the local cluster's
	// node agents directly instead of through the API server's node proxy.
	LocalKubelets bool
	// NoAgents, when set, says why the in-cluster agents cannot run here
	// (nor the Java clients' pods).
	NoAgents string
	// JavaImage runs Kafka's Java clients as pods (JavaClientsOf): an
	// apache/kafka image, of the brokers' version by default.
	JavaImage string
	// EvidenceDir keeps what a story's workloads saw raw, for a finding's
	// reader: <EvidenceDir>/<topic>/<pod>.jsonl, each Java tool's events as
	// it printed them. Empty keeps nothing.
	EvidenceDir string
	// Timing, Bounds and SteadyState: how long, how strict, how much load.
	Timing      TimingConfig
	Bounds      BoundsConfig
	SteadyState SteadyStateConfig
	// Narrator, Cleanups and Recorder connect a story to its caller; a nil
	// Narrator or Recorder discards. Run refuses a nil Cleanups: the
	// fault's Recover must have somewhere to go.
	Narrator Narrator
	Cleanups Cleanups
	Recorder Recorder
}

// By narrates a step, if e has a narrator.
func (e *Env) By(text string) {
	if e.Narrator != nil {
		e.Narrator.By(text)
	}
}

// Logf writes a log line, if e has a narrator.
func (e *Env) Logf(format string, a ...any) {
	if e.Narrator != nil {
		fmt.Fprintf(e.Narrator, format, a...)
	}
}

// Defer registers fn with e's Cleanups (see Cleanups.Defer); without
// Cleanups fn is never called.
func (e *Env) Defer(fn func(ctx context.Context) error, timeout time.Duration) {
	if e.Cleanups != nil {
		e.Cleanups.Defer(fn, timeout)
	}
}

// out is where faults narrate: the narrator, or nowhere.
func (e *Env) out() io.Writer {
	if e.Narrator == nil {
		return io.Discard
	}
	return e.Narrator
}

// admin is the identity that deploys the agents.
func (e *Env) admin() kubernetes.Interface {
	if e.Admin != nil {
		return e.Admin
	}
	return e.Kube
}

// KafkaClient returns a Kafka client of e's own for its brokers, with
// opts; closing it is the caller's job.
func (e *Env) KafkaClient(opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(e.Bootstrap...)}, e.KafkaOpts...), opts...)...)
	if err != nil {
		return nil, fmt.Errorf("scenario: Kafka client: %w", err)
	}
	return cl, nil
}

// WithKafka runs fn with a Kafka client of e's own, for admin requests,
// and closes it after.
func (e *Env) WithKafka(fn func(*kafkaadmin.Client) error) error {
	cl, err := e.KafkaClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(kafkaadmin.New(cl))
}

// Snapshot returns every broker's identity on Kubernetes.
func (e *Env) Snapshot(ctx context.Context) ([]brokers.Server, error) {
	return brokers.Snapshot(ctx, e.Kube, e.Namespace, e.Selector, e.Flavor)
}

// FaultScope is what every fault of e aims at.
func (e *Env) FaultScope() chaos.Scope {
	return chaos.Scope{Client: e.Kube, Namespace: e.Namespace, RunID: e.RunID, DryRun: e.DryRun, Out: e.out()}
}

// Access is what recovering a fault needs besides the API: pods/exec, and
// Kafka to move partitions back.
func (e *Env) Access() chaos.Access {
	return chaos.Access{Exec: e.Exec, Kafka: e.Mover()}
}

// Mover moves partitions through a Kafka client of e's own per call, as
// e's other Kafka calls do.
func (e *Env) Mover() chaos.Mover { return mover{e} }

type mover struct{ e *Env }

func (m mover) Assignments(ctx context.Context, topics ...string) (a kafkaadmin.Assignments, err error) {
	err = m.e.WithKafka(func(cl *kafkaadmin.Client) error {
		a, err = cl.Assignments(ctx, topics...)
		return err
	})
	return a, err
}

func (m mover) Reassign(ctx context.Context, to kafkaadmin.Assignments, throttle int64) error {
	return m.e.WithKafka(func(cl *kafkaadmin.Client) error { return cl.Reassign(ctx, to, throttle) })
}

// NeedCluster returns a *SkipError, narrated, when e has no cluster to
// read: a dry run of the local target, which is not brought up then.
func (e *Env) NeedCluster(label string) error {
	if e.Kube != nil {
		return nil
	}
	e.By(fmt.Sprintf("dry-run: would run the %s story against the local cluster", label))
	return &SkipError{Reason: "dry-run"}
}

// Controller is the controller a controller fault aims at: the KRaft
// quorum's leader, or in ZooKeeper mode the controller broker; what says
// which.
func (e *Env) Controller(ctx context.Context) (id int32, what string, err error) {
	err = e.WithKafka(func(cl *kafkaadmin.Client) error {
		if e.ZooKeeperConnect != "" {
			id, what = -1, "the controller broker (ZooKeeper mode)"
			id, err = cl.ControllerBroker(ctx)
			return err
		}
		what = "the active controller"
		id, err = cl.ActiveController(ctx)
		return err
	})
	return id, what, err
}

// BrokerIDs lists the IDs of the snapshot's brokers (not controllers-only).
func BrokerIDs(bs []brokers.Server) []int32 {
	var ids []int32
	for _, b := range bs {
		if b.Broker {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// Hold keeps a fault (or a phase) in place for d; it returns early when
// ctx ends.
func Hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Outcome is what a story saw: one spec of report.json.
type Outcome = report.Spec
