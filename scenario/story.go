package scenario

import (
	"context"
	"errors"
	"time"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
)

// Kind is what a fault is to Kafka, which sets how long the load may go
// without an ack (see unavailabilityBound).
type Kind int

const (
	// Unknown is a fault of no known timing: DefaultMaxUnavailable.
	Unknown Kind = iota
	// Graceful is an operation that must pace itself (a roll, a drain, a
	// graceful delete): the pacing check judges it, and its
	// unavailability is bounded tightly (GracefulMaxUnavailable).
	Graceful
	// Hard is a fault Kafka answers by fencing the victim (a kill, a
	// pause, an isolation): its unavailability is bounded by the brokers'
	// broker.session.timeout.ms (zookeeper.session.timeout.ms in
	// ZooKeeper mode) and HardMargin.
	Hard
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Graceful:
		return "graceful"
	case Hard:
		return "hard"
	}
	return "unknown"
}

// Topic is the workload topic of a story labelled label.
func Topic(label string) string { return "kafkachaos-" + label }

// Picker chooses a story's victims when the fault is injected, after the
// baseline, from a snapshot of the brokers, so "the leader of partition 0"
// is the leader of then. topic is the story's workload topic.
type Picker[E any] func(ctx context.Context, e E, topic string, snap []brokers.Server) ([]brokers.Server, error)

// Story is one fault's tale: whom it hits, what it does, and what happens
// while it holds. E is the caller's own environment, which the story's
// steps receive; Run tells the story.
type Story[E any] struct {
	// Label names the fault (pod-kill, node-drain, ...); the workload
	// topic is kafkachaos-<label>.
	Label string
	// Pick chooses the victims.
	Pick Picker[E]
	// Fault builds the fault aimed at the victims.
	Fault func(e E, victims []brokers.Server) chaos.Fault
	// During runs while the fault holds, in place of holding for
	// Timing.Hold when set; an error is a failed check of the fault phase.
	During func(ctx context.Context, e E, victims []brokers.Server) error
	// Settle runs after Recover, before the victims are awaited (a config
	// change rolls the pods back); an error fails report.CheckRolledOut.
	Settle func(ctx context.Context, e E, victims []brokers.Server) error
	// NewPods: the victims must come back as new pods (new UIDs).
	NewPods bool
	// PodsBack, when set, waits for the fault's pods that are not brokers
	// (a ZooKeeper server) to come back, after the victims; the pods-back
	// check and the time to pods Ready include it.
	PodsBack func(ctx context.Context, e E) error
	// NewVolume: the victims' claim from this volume claim template
	// (<template>-<pod>) comes back as a new claim on a new volume (a disk
	// loss).
	NewVolume string
	// DataLost: the fault loses the victims' data on purpose (a disk
	// loss), so the data survival check leaves them out (the story's own
	// checks judge the loss); every other broker must come back with the
	// data it had.
	DataLost bool
	// Finally runs after the story's own checks: it adds the figures it
	// measured (Observations) and the problems of checks of its own.
	Finally func(ctx context.Context, e E, victims []brokers.Server, o *Outcome)
	// Round names one of several stories of a spec (game day rounds), so
	// each has its own row in the report.
	Round string
	// ExpectFailures marks a negative story: its checks are meant to
	// fail, and the report says so.
	ExpectFailures bool
	// Agents runs the steady state from this many in-cluster agent pods
	// instead of SteadyState.Agents.
	Agents int
	// Workloads run side by side while the story is told, each adding its
	// own checks to the verdict; nil: the steady state alone (from Agents
	// agents, or the caller's process).
	Workloads []StartWorkload
	// Kind says what the fault is to Kafka.
	Kind Kind
	// MaxUnavailable, when set, is the story's own bound on its
	// unavailability, and MaxUnavailableWhy where it comes from (a fault
	// whose victim is not a broker, which the producers should hardly
	// notice).
	MaxUnavailable    time.Duration
	MaxUnavailableWhy string
	// Unbounded, when set, says why the story's unavailability is
	// measured and reported but not bounded (a story that holds most of
	// the cluster down on purpose, to test something else).
	Unbounded string
}

// ErrSkipped marks a story that did not run: a dry run, which only plans
// its fault, or a story this environment cannot run. errors.As with a
// *SkipError says why.
var ErrSkipped = errors.New("scenario: skipped")

// SkipError is a story that did not run, and why: the text to skip the
// caller's spec with ("dry-run: force-delete pod kafka-1").
type SkipError struct{ Reason string }

// Error says that the story was skipped, and why.
func (e *SkipError) Error() string { return "scenario: skipped: " + e.Reason }

// Is makes a *SkipError match ErrSkipped.
func (e *SkipError) Is(target error) bool { return target == ErrSkipped }

// Checks returns the checks a story makes, in the order it makes them:
// report.Checks()'s order. A story adds report.CheckFault only with a
// During step, report.CheckRolledOut only with a Settle step,
// report.CheckPacing only for a Graceful fault; the steady state adds
// report.CheckRecords and report.CheckBounds, report.CheckGroup with an
// application's consumer group (Shape.Group) and report.CheckTransactions
// with transactions (Shape.Transactions); another workload adds its own
// checks in their place.
func Checks() []report.CheckName {
	return []report.CheckName{report.CheckAudit, report.CheckFault, report.CheckRolledOut, report.CheckPodsBack,
		report.CheckHealth, report.CheckRecords, report.CheckBounds, report.CheckGroup, report.CheckTransactions, report.CheckPacing, report.CheckIdentity,
		report.CheckLogDirs, report.CheckCluster}
}
