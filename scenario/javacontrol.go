package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/chaos"
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

// JavaProducer names the Java producer as a client fault's victim; a
// member of the group is named by its slot, from 0.
const JavaProducer = -1

// Kill kills client's running pod (JavaProducer or a member's slot),
// deleted with no grace period (SIGKILL, nothing flushed or committed),
// waits until its events end, and returns its pod and what it had done:
// the producers' acknowledgements so far, or the records the member read.
func (c *JavaControl) Kill(ctx context.Context, client int) (pod string, done int64, err error) {
	j, err := c.clients()
	if err != nil {
		return "", 0, err
	}
	return j.kill(ctx, client)
}

// Replace starts client's next incarnation, as a restarted application
// would (a pod of its own: a producer's values with a prefix of their
// own, a member that joins as a new one), unless the current one still
// runs.
func (c *JavaControl) Replace(ctx context.Context, client int) (pod string, started bool, err error) {
	j, err := c.clients()
	if err != nil {
		return "", false, err
	}
	return j.replace(ctx, client)
}

// OwnedByOthers is how many partitions the members other than slot i own,
// and how many the topic has, as far as the members have said.
func (c *JavaControl) OwnedByOthers(i int) (owned, partitions int, err error) {
	j, err := c.clients()
	if err != nil {
		return 0, 0, err
	}
	for k := range j.owned {
		if k != i {
			owned += int(j.owned[k].Load())
		}
	}
	return owned, j.partitions, nil
}

// AssignedSince reports whether the member now in slot i was assigned
// partitions since t (as its event arrived), and owns some still.
func (c *JavaControl) AssignedSince(i int, t time.Time) (bool, error) {
	j, err := c.clients()
	if err == nil && (i < 0 || i >= len(j.owned)) {
		err = fmt.Errorf("scenario: no Java member %d", i)
	}
	if err != nil {
		return false, err
	}
	return j.owned[i].Load() > 0 && j.assignedAt[i].Load() > t.UnixNano(), nil
}

// Read is how many records the member now in slot i has read.
func (c *JavaControl) Read(i int) (int64, error) {
	j, err := c.clients()
	if err == nil && (i < 0 || i >= len(j.read)) {
		err = fmt.Errorf("scenario: no Java member %d", i)
	}
	if err != nil {
		return 0, err
	}
	return j.read[i].Load(), nil
}

// JavaKill is a client fault: a Java client's pod is killed (SIGKILL, no
// flush), and Recover starts a new one in its place.
//   - The producer: what it had sent without an acknowledgement may be
//     written once or not at all; what it had acknowledged must all be
//     read.
//   - A member of the group: it neither commits nor leaves, so the group
//     hands its partitions over once the coordinator expires it, and reads
//     again from its last commit (duplicates allowed from there, never
//     before it); its replacement joins as a new member.
//
// report.CheckJava judges both. The pods are the suite's own, deleted
// with the run: nothing for the ledger.
type JavaKill struct {
	Control *JavaControl
	Client  int // JavaProducer, or a member's slot
	DryRun  bool
	Out     io.Writer
	// Killed is the killed pod, once injected, KilledAt when its delete
	// was sent, and Done what it had done (JavaControl.Kill).
	Killed   string
	KilledAt time.Time
	Done     int64
}

var _ chaos.Fault = (*JavaKill)(nil)

// Name says what is killed.
func (f *JavaKill) Name() string {
	return fmt.Sprintf("kill the Java %s's pod (SIGKILL)", javaClientName(f.Client))
}

// Plan says what Inject does.
func (f *JavaKill) Plan() string {
	if f.Client == JavaProducer {
		return "delete the Java producer's pod with no grace period (SIGKILL, nothing flushed); on recovery a new producer pod starts with values of its own"
	}
	return fmt.Sprintf("delete the pod of the Java group's %s with no grace period (SIGKILL: no commit, no leave); on recovery a new member starts in its place", javaClientName(f.Client))
}

// javaClientName names a client: the producer, or member i.
func javaClientName(client int) string {
	if client == JavaProducer {
		return "producer"
	}
	return fmt.Sprintf("member %d", client)
}

// Inject kills the client (a dry run prints the plan).
func (f *JavaKill) Inject(ctx context.Context) error {
	if f.DryRun {
		fmt.Fprintf(f.out(), "dry-run: %s\n", f.Plan())
		return nil
	}
	if f.Control == nil {
		return ErrNoJava
	}
	f.KilledAt = time.Now()
	pod, done, err := f.Control.Kill(ctx, f.Client)
	if err != nil {
		return err
	}
	f.Killed, f.Done = pod, done
	what := "acknowledgements"
	if f.Client != JavaProducer {
		what = "records read"
	}
	fmt.Fprintf(f.out(), "%s killed after %d %s\n", pod, done, what)
	return nil
}

// Recover starts a new client in the killed one's place, if it is dead.
func (f *JavaKill) Recover(ctx context.Context) error {
	if f.DryRun || f.Control == nil {
		return nil
	}
	pod, started, err := f.Control.Replace(ctx, f.Client)
	if errors.Is(err, ErrNoJava) {
		return nil
	}
	if started {
		fmt.Fprintf(f.out(), "%s started in its place\n", pod)
	}
	return err
}

func (f *JavaKill) out() io.Writer {
	if f.Out == nil {
		return io.Discard
	}
	return f.Out
}
