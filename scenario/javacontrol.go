package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/javaload"
)

// ErrNoJava: a Java client fault without a running Java workload.
var ErrNoJava = errors.New("scenario: a Java client fault needs the Java clients running (JavaSettings.Control)")

// JavaControl reaches the Java clients of a running story, for client
// faults: give it to JavaSettings.Control, and the workload attaches
// itself when it starts.
type JavaControl struct {
	mu sync.Mutex
	j  *javaClients
}

func (c *JavaControl) attach(j *javaClients) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.j = j
}

func (c *JavaControl) clients() (*javaClients, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.j == nil {
		return nil, ErrNoJava
	}
	return c.j, nil
}

// KillProducer kills the running producer's pod (deleted with no grace
// period: SIGKILL, nothing flushed), waits until its events end, and
// returns its pod and the acknowledgements seen so far.
func (c *JavaControl) KillProducer(ctx context.Context) (pod string, acked int64, err error) {
	j, err := c.clients()
	if err != nil {
		return "", 0, err
	}
	pod = j.producer()
	if err := javaload.Kill(ctx, j.env.admin(), j.spec.Namespace, pod); err != nil {
		return pod, 0, err
	}
	if err := j.awaitEnd(ctx, pod); err != nil {
		return pod, 0, err
	}
	return pod, j.acked.Load(), nil
}

// ReplaceProducer starts the next producer, as a restarted application
// would (a pod of its own, values with a prefix of their own), unless the
// current one still runs.
func (c *JavaControl) ReplaceProducer(ctx context.Context) (pod string, started bool, err error) {
	j, err := c.clients()
	if err != nil {
		return "", false, err
	}
	return j.replaceProducer(ctx)
}

// JavaProducerKill is a client fault: the Java producer's pod is killed
// (SIGKILL, no flush: what it had sent without an acknowledgement may be
// written once or not at all), and Recover starts a new producer. The
// records it had acknowledged must still all be read (report.CheckJava).
// The pods are the suite's own, deleted with the run: nothing for the
// ledger.
type JavaProducerKill struct {
	Control *JavaControl
	DryRun  bool
	Out     io.Writer
	// Killed is the killed producer's pod and Acked the acknowledgements
	// seen up to its end, once injected.
	Killed string
	Acked  int64
}

var _ chaos.Fault = (*JavaProducerKill)(nil)

// Name says what is killed.
func (f *JavaProducerKill) Name() string { return "kill the Java producer's pod (SIGKILL)" }

// Plan says what Inject does.
func (f *JavaProducerKill) Plan() string {
	return "delete the Java producer's pod with no grace period (SIGKILL, nothing flushed); on recovery a new producer pod starts with values of its own"
}

// Inject kills the producer (a dry run prints the plan).
func (f *JavaProducerKill) Inject(ctx context.Context) error {
	if f.DryRun {
		fmt.Fprintf(f.out(), "dry-run: %s\n", f.Plan())
		return nil
	}
	if f.Control == nil {
		return ErrNoJava
	}
	pod, acked, err := f.Control.KillProducer(ctx)
	if err != nil {
		return err
	}
	f.Killed, f.Acked = pod, acked
	fmt.Fprintf(f.out(), "%s killed after %d acknowledgements\n", pod, acked)
	return nil
}

// Recover starts a new producer if the last one is dead.
func (f *JavaProducerKill) Recover(ctx context.Context) error {
	if f.DryRun || f.Control == nil {
		return nil
	}
	pod, started, err := f.Control.ReplaceProducer(ctx)
	if errors.Is(err, ErrNoJava) {
		return nil
	}
	if started {
		fmt.Fprintf(f.out(), "%s started in its place\n", pod)
	}
	return err
}

func (f *JavaProducerKill) out() io.Writer {
	if f.Out == nil {
		return io.Discard
	}
	return f.Out
}
