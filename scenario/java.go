package scenario

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/javaload"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// JavaTopicSuffix names the Java clients' topic after the story's: their
// records are not the steady state's, whose verifier would not know them.
const JavaTopicSuffix = "-java"

// Timeouts of the Java clients: a JVM's start on a loaded node (or an
// image's pull), the group's first assignment, and the end of a tool
// once its pod is stopped (its grace period and more).
const (
	javaGroupTimeout = 3 * time.Minute
	javaStopTimeout  = javaload.EndTimeout + time.Minute
	javaDrainTimeout = 3 * time.Minute
	javaPoll         = time.Second
)

// JavaSettings shape the Java clients beside a story.
type JavaSettings struct {
	Members  int    // the group's members; default 3
	Protocol string // classic (default: the Java client's own default) or consumer (KIP-848)
	Rate     int    // the producer's records/s; default 200
	// Control, when set, is attached to the running clients, for client
	// faults (JavaKill).
	Control *JavaControl
}

// WithDefaults fills what j leaves unset.
func (j JavaSettings) WithDefaults() JavaSettings {
	j.Members = cmp.Or(j.Members, 3)
	j.Protocol = cmp.Or(j.Protocol, steadystate.GroupProtocolClassic)
	j.Rate = cmp.Or(j.Rate, 200)
	return j
}

// JavaClientsOf is a workload of Kafka's own Java clients as pods
// (javaload): a VerifiableProducer, idempotent with acks=all, and a group
// of VerifiableConsumers, each record checked by javaclients.Verifier
// (report.CheckJava). It runs in env's namespace from env.JavaImage, and
// is skipped where the in-cluster agents are (Env.NoAgents).
func JavaClientsOf(js JavaSettings) StartWorkload {
	return func(ctx context.Context, env *Env, topic string) (Workload, error) {
		js := js.WithDefaults()
		env.By(fmt.Sprintf("starting Kafka's own Java clients as pods of %s on %s%s: a VerifiableProducer (%d records/s, idempotent, acks=all) and a group of %d VerifiableConsumers on protocol %s",
			env.JavaImage, topic, JavaTopicSuffix, js.Rate, js.Members, js.Protocol))
		return startJava(ctx, env, topic+JavaTopicSuffix, js)
	}
}

// javaClients is the Java workload: its pods, what they said, the verdict.
type javaClients struct {
	env    *Env
	spec   javaload.Spec
	follow context.Context // the tools' events are read until it ends
	v      *javaclients.Verifier
	// partitions is the topic's partition count.
	partitions int

	acked       atomic.Int64
	owned, read []atomic.Int64 // by member slot: the partitions its member owns, the records it read
	assignedAt  []atomic.Int64 // by member slot: when its member's latest assignment of partitions came (Unix ns)
	mu          sync.Mutex
	tools       map[string]*toolRun // each followed pod's tool
	stopped     map[string]bool     // the pods the suite stopped or killed
	replaced    atomic.Int64        // the clients replaced after an unasked end
	incarnation int                 // the running producer's
	members     []int               // by slot: the running member's incarnation
	finished    bool                // Finish began: no client starts any more
	// clientsMu orders the clients' changes: a replacement, Finish.
	clientsMu sync.Mutex
	res       *javaclients.Result
	failed    []string // what kept the run from being judged whole
	notes     []string // what the outcome's observations should say besides the figures

	// The group's lag (javaclients.Verifier.Lag), sampled from the
	// producer's start until Finish, read around the story's marks.
	lag             groupcheck.Sampler
	committed       committedWatch // the group's committed offsets, as the brokers serve them
	stopLag         chan struct{}
	baseline, fault time.Time
}

var _ Recorded = (*javaClients)(nil)

// startJava prepares topic and the group's start, deploys the members,
// waits until the group owns every partition, then starts the producer.
func startJava(ctx context.Context, env *Env, topic string, js JavaSettings) (*javaClients, error) {
	switch {
	case env.NoAgents != "":
		return nil, &SkipError{Reason: env.NoAgents}
	case env.JavaImage == "":
		return nil, &SkipError{Reason: "no image for the Java clients (Env.JavaImage)"}
	}
	share := js.Protocol == javaload.Share
	spec := javaload.Spec{Namespace: env.Namespace, Name: "kafkachaos-java", Image: env.JavaImage, Bootstrap: env.Bootstrap,
		Topic: topic, Group: "kafkachaos-java-" + env.RunID, Protocol: js.Protocol, Members: js.Members, Rate: js.Rate, Deadline: StoryTimeout}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	v, start, err := javaVerifier(ctx, env, &spec)
	if err != nil {
		return nil, err
	}
	env.By("deleting Java clients an earlier run may have left")
	if err := deleteJava(ctx, env, spec.Name); err != nil {
		return nil, err
	}
	// The tools' events are followed for as long as the workload lives,
	// whichever step started a tool (a fault's recovery starts a producer).
	follow, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	j := &javaClients{env: env, spec: spec, follow: follow, v: v,
		owned: make([]atomic.Int64, js.Members), read: make([]atomic.Int64, js.Members), assignedAt: make([]atomic.Int64, js.Members), members: make([]int, js.Members),
		tools: map[string]*toolRun{}, stopped: map[string]bool{}, stopLag: make(chan struct{}), partitions: len(start)}
	// Whatever ends the story (Finish, a failure, Ctrl-C), nothing starts
	// a client any more once the cleanup begins: the supervisor would
	// otherwise replace the pods it deletes.
	env.Defer(func(ctx context.Context) error {
		defer stopFollowing()
		j.finishClients()
		j.stopSampling()
		env.By("deleting the Java clients")
		return deleteJava(ctx, env, spec.Name)
	}, javaStopTimeout+time.Minute)
	if err := javaload.CreateConfig(ctx, env.admin(), spec); err != nil {
		return nil, err
	}
	for i := range js.Members {
		if err := j.start(ctx, spec.ConsumerPod(i, 0), j.consumerEvent(i, spec.ConsumerName(i, 0))); err != nil {
			return nil, err
		}
	}
	cl, err := env.KafkaClient()
	if err != nil {
		return nil, err
	}
	err = Poll(ctx, javaPoll, javaGroupTimeout, fmt.Sprintf("the Java group owns all %d partitions", len(start)), func(ctx context.Context) error {
		if share {
			return javaclients.ShareGroupReady(ctx, kadm.NewClient(cl), spec.Group, topic, spec.Members, len(start))
		}
		return javaclients.GroupOwns(j.owned, len(start))
	})
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("scenario: %w; %s", err, j.ends())
	}
	if _, err := j.nextProducer(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	go j.lag.Run(j.stopLag, j.v.Lag)
	go func() {
		defer cl.Close()
		if !share { // a share group commits no offsets
			j.committed.run(follow, kadm.NewClient(cl), spec.Group, topic, j.stopLag)
		}
	}()
	go j.supervise(follow)
	if js.Control != nil {
		js.Control.attach(j)
	}
	return j, nil
}

// javaVerifier prepares spec's topic and group (a share group's only where
// the brokers serve share groups, under a name of its own), and returns
// the verifier of spec's group and the group's start.
func javaVerifier(ctx context.Context, env *Env, spec *javaload.Spec) (*javaclients.Verifier, []int64, error) {
	share, limit := spec.Protocol == javaload.Share, 0
	if share {
		var err error
		if limit, err = shareSupport(ctx, env); err != nil {
			return nil, nil, err
		}
		spec.Group = spec.Topic + "-share-" + env.RunID // a run's share groups are apart, whatever the state each left
	}
	start, err := prepareJavaTopic(ctx, env, spec.Topic, spec.Group, share)
	if err != nil {
		return nil, nil, err
	}
	if share {
		return javaclients.NewShareVerifier(spec.Topic, time.Now(), start, limit), start, nil
	}
	return javaclients.NewVerifier(spec.Topic, time.Now(), start), start, nil
}

// deleteJava deletes the Java clients of run name and waits until they are
// gone.
func deleteJava(ctx context.Context, env *Env, name string) error {
	if err := javaload.Delete(ctx, env.admin(), env.Namespace, name); err != nil {
		return err
	}
	return Poll(ctx, javaPoll, javaStopTimeout, "the Java clients gone", func(ctx context.Context) error {
		left, err := javaload.Left(ctx, env.admin(), env.Namespace, name)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("left: %s", strings.Join(left, ", "))
		}
		return err
	})
}

func (j *javaClients) producerEvent(e javaclients.Event) {
	if e.Name == javaclients.ProducerSendOK {
		j.acked.Add(1)
	}
	j.v.Producer(e)
}

// consumerEvent takes the events of member, in slot i.
func (j *javaClients) consumerEvent(i int, member string) func(javaclients.Event) {
	return func(e javaclients.Event) {
		switch e.Name {
		case javaclients.RecordData:
			j.read[i].Add(1)
		case javaclients.PartitionsAssigned:
			j.owned[i].Add(int64(len(e.Partitions)))
			if len(e.Partitions) > 0 {
				j.assignedAt[i].Store(time.Now().UnixNano())
			}
		case javaclients.PartitionsRevoked:
			j.owned[i].Add(-int64(len(e.Partitions)))
		}
		j.v.Consumer(member, e)
	}
}

// WarmUp returns once the producer's sends are acknowledged, and min
// has passed.
func (j *javaClients) WarmUp(ctx context.Context, min time.Duration) error {
	begin := time.Now()
	err := Poll(ctx, javaPoll, javaGroupTimeout, "the Java producer's first acknowledgements", func(context.Context) error {
		if j.acked.Load() == 0 {
			return fmt.Errorf("none yet; %s", j.ends())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	select {
	case <-time.After(min - time.Since(begin)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Finish stops the producer (it flushes and closes), waits until the
// group has read up to the topic's end, stops the members (each commits
// and leaves), and judges what they said.
func (j *javaClients) Finish(ctx context.Context, _ steadystate.Hypothesis) error {
	j.env.By("stopping the Java producer, and the group once it has read everything")
	loadEnd := time.Now()
	if err := j.stop(ctx, j.finishProducers()); err != nil {
		return err
	}
	end, err := j.endOffsets(ctx)
	if err != nil {
		return err
	}
	done, closeDone, err := j.brokersDone()
	if err != nil {
		return err
	}
	defer closeDone()
	err = Poll(ctx, javaPoll, javaDrainTimeout, fmt.Sprintf("the Java group read up to %v", end), func(ctx context.Context) error {
		if !j.v.ProcessedThrough(end) {
			return fmt.Errorf("not yet; %s", j.ends())
		}
		return done(ctx, end)
	})
	if err != nil {
		j.fail(err.Error()) // judged anyway: what the group did not read is lost
	}
	for i := range j.spec.Members {
		if err := j.stop(ctx, j.member(i)); err != nil {
			return err
		}
	}
	j.toolErrors()
	j.stopSampling()
	res := j.v.Result(time.Now())
	j.mu.Lock()
	res.Group.Lag = j.lag.Lag(j.baseline, j.fault, loadEnd)
	j.res = &res
	j.mu.Unlock()
	return nil
}

// Checks is the Java clients' verdict: what javaclients.Verifier found,
// the group's committed offsets as the brokers served them, a producer
// that had nothing acknowledged, and what kept a tool's events from being
// read whole.
func (j *javaClients) Checks() []report.Check {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.res == nil {
		return nil
	}
	p := j.res.Problems()
	if j.spec.Protocol != javaload.Share { // a share group commits no offsets
		p = append(p, j.committed.problems()...)
	}
	p = append(p, j.failed...)
	if j.acked.Load() == 0 {
		p = append(p, "the Java producer had no record acknowledged: the run shows nothing")
	}
	return []report.Check{{Name: report.CheckJava, Problems: p}}
}

// Record puts the Java clients' figures into the outcome, and the Java
// producer's longest stall into its observations.
func (j *javaClients) Record(o *Outcome) {
	o.Java = j.res
	if j.res == nil {
		return
	}
	if g := j.res.LongestAckGap(); g.Gap > 0 {
		o.Observations = append(o.Observations, fmt.Sprintf(
			"the Java producers' longest wait between acknowledgements: %s, partition %d of %s, from %s to %s UTC",
			g.Gap.Round(10*time.Millisecond), g.Partition, j.spec.Topic, g.From.UTC().Format("15:04:05.000"), g.To.UTC().Format("15:04:05.000")))
	}
	j.mu.Lock()
	o.Observations = append(o.Observations, j.notes...)
	j.mu.Unlock()
	if n := j.replaced.Load(); n > 0 {
		o.Observations = append(o.Observations, fmt.Sprintf("%d of the Java clients' pods ended unasked (evicted, deleted or dead) and were replaced", n))
	}
	if r := j.res.Share; r != nil {
		o.Observations = append(o.Observations, shareObservation(*r))
	}
	if l := j.res.Group.Lag; l != nil {
		o.Observations = append(o.Observations, LagObservation("the Java group", *l))
	}
}
