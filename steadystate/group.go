package steadystate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// The group protocols, as Kafka names them (the consumer's group.protocol).
const (
	// GroupProtocolClassic is the client-driven protocol (JoinGroup,
	// SyncGroup); franz-go balances with its cooperative-sticky balancer.
	GroupProtocolClassic = "classic"
	// GroupProtocolConsumer is KIP-848's: the broker's coordinator
	// assigns (franz-go's ServerSideBalancer, with the range assignor).
	GroupProtocolConsumer = "consumer"
)

// GroupConfig is an application's consumer group, which reads the workload
// topic alongside the run's verifying consumer, as applications do: its
// members poll, process, and commit after processing. Its history is
// checked by groupcheck.
type GroupConfig struct {
	// Members in the group; 0 runs none.
	Members int
	// Protocol is GroupProtocolClassic (the default) or
	// GroupProtocolConsumer.
	Protocol string
	// Name is the group's ID; empty names it after the run
	// (kafkachaos-<run ID in hex>[-p<producer base>]-app). A story that aims a fault at the group's
	// coordinator names it, so it can ask FindCoordinator. Its start
	// offsets are committed before any member joins, so a name used
	// before starts afresh.
	Name string
	// Control, when set, lets a story crash and restart members
	// (GroupControl); its members then dial through it.
	Control *GroupControl
}

// name is the group's ID in a run of cfg.
func (g GroupConfig) name(run uint64, base uint32) string {
	if g.Name != "" {
		return g.Name
	}
	return fmtGroup(run, base) + "-app"
}

// maxGroupMembers bounds GroupConfig.Members.
const maxGroupMembers = 64

func (g GroupConfig) validate() error {
	switch {
	case g.Members < 0 || g.Members > maxGroupMembers:
		return fmt.Errorf("group members %d: need 0 to %d", g.Members, maxGroupMembers)
	case g.Protocol != "" && g.Protocol != GroupProtocolClassic && g.Protocol != GroupProtocolConsumer:
		return fmt.Errorf("group protocol %q: want %s or %s", g.Protocol, GroupProtocolClassic, GroupProtocolConsumer)
	}
	return nil
}

// appGroup is the running group: its members and the checker they report to.
type appGroup struct {
	name     string
	topic    string
	protocol string // GroupProtocolClassic or GroupProtocolConsumer
	chk      *groupcheck.Checker
	opts     func(m *member) []kgo.Opt // a member's client options
	ctx      context.Context           // the run's
	members  []*member                 // by slot: the member now in it
	all      []*member                 // every member started, crashed ones too
	// restarts counts, by slot, the members started after a crash.
	restarts []int
	control  *GroupControl
	wg       sync.WaitGroup
	stop     chan struct{}
	once     sync.Once
	lag      groupcheck.Sampler
}

// member is one member of the group: a client of its own.
type member struct {
	name  string
	topic string
	cl    *kgo.Client
	chk   *groupcheck.Checker
	mu    sync.Mutex
	// next is, by partition, the offset after the last record processed;
	// committed, what the broker last acknowledged of it; owned, what the
	// member was assigned and has not given up.
	next      map[int32]kgo.EpochOffset
	committed map[int32]int64
	owned     map[int32]bool
	// life is held while the member processes, commits or hears of a
	// rebalance, so that a crash comes between two of those (alive).
	life    sync.Mutex
	crashed bool
	// ctx ends with the run, or at a crash (cancel).
	ctx    context.Context
	cancel context.CancelFunc
	dialer *cutDialer // nil unless the group has a Control
}

// startAppGroup starts the group's members at startOffsets, committed for the
// group before any member joins.
func (r *Runner) startAppGroup(ctx context.Context, adm *kadm.Client, begin time.Time, startOffsets []int64) (*appGroup, error) {
	c := r.cfg
	g := &appGroup{name: c.Group.name(c.RunID, c.ProducerBase), topic: c.Topic, protocol: c.Group.Protocol, chk: groupcheck.New(begin, startOffsets), stop: make(chan struct{}),
		ctx: ctx, restarts: make([]int, c.Group.Members), control: c.Group.Control}
	g.opts = func(m *member) []kgo.Opt {
		opts := append(r.baseOpts(),
			kgo.ConsumerGroup(g.name), kgo.ConsumeTopics(c.Topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
			kgo.OnPartitionsAssigned(m.assigned), kgo.OnPartitionsRevoked(m.revoked), kgo.OnPartitionsLost(m.lost),
		)
		if c.Group.Protocol == GroupProtocolConsumer {
			opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
		}
		if m.dialer != nil {
			opts = append(opts, kgo.Dialer(m.dialer.DialContext))
		}
		return opts
	}
	if g.control != nil && c.TLS != nil {
		return nil, errors.New("steadystate: a group's member faults (GroupConfig.Control) need PLAINTEXT brokers")
	}
	if err := commitStart(ctx, adm, g.name, c.Topic, startOffsets); err != nil {
		return nil, err
	}
	for i := range c.Group.Members {
		m, err := g.newMember(fmt.Sprintf("member-%d", i))
		if err != nil {
			g.close()
			return nil, err
		}
		g.members = append(g.members, m)
	}
	for _, m := range g.members {
		g.start(m)
	}
	g.wg.Go(func() { g.lag.Run(g.stop, g.chk.Lag) })
	if g.control != nil {
		g.control.attach(g)
	}
	return g, nil
}

// newMember makes a member named name, with a client of its own; start
// runs it.
func (g *appGroup) newMember(name string) (*member, error) {
	m := &member{name: name, topic: g.topic, chk: g.chk, next: map[int32]kgo.EpochOffset{}, committed: map[int32]int64{}, owned: map[int32]bool{}}
	m.ctx, m.cancel = context.WithCancel(g.ctx)
	if g.control != nil {
		m.dialer = newCutDialer(g.control.dial)
	}
	cl, err := kgo.NewClient(g.opts(m)...)
	if err != nil {
		m.cancel()
		return nil, fmt.Errorf("steadystate: group %s, %s's client: %w", g.name, name, err)
	}
	m.cl = cl
	g.all = append(g.all, m)
	return m, nil
}

// start runs m until the group stops.
func (g *appGroup) start(m *member) { g.wg.Go(func() { m.run(g.stop) }) }

// close stops the members and waits for them; the live ones leave the
// group. A crashed member's client cannot reach the brokers: its Close
// (which would try to leave) is given closeCrashed, then left to finish
// in the background, where its dials fail until franz-go gives up (its
// retry timeout): a bounded leak, after a crash only.
func (g *appGroup) close() {
	g.once.Do(func() {
		if g.control != nil {
			g.control.detach(g)
		}
		close(g.stop)
		g.wg.Wait()
		var crashed sync.WaitGroup
		for _, m := range g.all {
			if m.hasCrashed() {
				crashed.Go(func() { closeWithin(m.cl, closeCrashed) })
				continue
			}
			m.cl.Close()
			m.cancel()
		}
		crashed.Wait()
	})
}

// closeCrashed is how long close waits for a crashed member's client.
const closeCrashed = 5 * time.Second

// closeWithin closes cl, waiting at most d for it.
func closeWithin(cl *kgo.Client, d time.Duration) {
	done := make(chan struct{})
	go func() { cl.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// drain waits until the group has processed every offset below end, or
// timeout passes, or ctx ends.
func (g *appGroup) drain(ctx context.Context, end []int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !g.chk.ProcessedThrough(end) {
		if time.Now().After(deadline) {
			return fmt.Errorf("steadystate: the consumer group did not process up to the end offsets within %s", timeout)
		}
		select {
		case <-g.stop:
			return errors.New("steadystate: the consumer group stopped before it drained")
		case <-ctx.Done():
			return fmt.Errorf("steadystate: the consumer group's drain: %w", ctx.Err())
		case <-time.After(consumerPoll):
		}
	}
	return nil
}

// run polls, processes and commits until stop, the run's end, or a
// crash.
func (m *member) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-m.ctx.Done():
			return
		default:
		}
		pollCtx, cancel := context.WithTimeout(m.ctx, consumerPoll)
		fetches := m.cl.PollFetches(pollCtx)
		cancel()
		if fetches.IsClientClosed() {
			return
		}
		ran := m.alive(func() {
			now := time.Now()
			fetches.EachError(func(_ string, p int32, err error) {
				var loss *kgo.ErrDataLoss
				if errors.As(err, &loss) {
					m.chk.Observe(groupcheck.Event{At: now, Member: m.name, Kind: groupcheck.Reset, Partition: p, First: loss.ResetTo})
				}
			})
			fetches.EachPartition(func(fp kgo.FetchTopicPartition) { m.process(now, fp) })
			m.commit(m.ctx, nil)
		})
		if !ran {
			return
		}
		m.cl.AllowRebalance()
	}
}

// process hands the partition's records to the application: one Polled
// event per run of consecutive offsets.
func (m *member) process(now time.Time, fp kgo.FetchTopicPartition) {
	rs := fp.Records
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1].Offset == rs[j].Offset+1 {
			j++
		}
		m.chk.Observe(groupcheck.Event{At: now, Member: m.name, Kind: groupcheck.Polled, Partition: fp.Partition, First: rs[i].Offset, Last: rs[j].Offset})
		i = j + 1
	}
	if len(rs) > 0 {
		last := rs[len(rs)-1]
		m.mu.Lock()
		m.next[fp.Partition] = kgo.EpochOffset{Epoch: last.LeaderEpoch, Offset: last.Offset + 1}
		m.mu.Unlock()
	}
}

// commit commits what was processed and not yet committed, in only (nil:
// every partition), synchronously, and reports what the broker
// acknowledged.
func (m *member) commit(ctx context.Context, only []int32) {
	m.mu.Lock()
	offs := map[int32]kgo.EpochOffset{}
	for p, eo := range m.next {
		if c, ok := m.committed[p]; (!ok || c != eo.Offset) && (only == nil || slices.Contains(only, p)) {
			offs[p] = eo
		}
	}
	m.mu.Unlock()
	if len(offs) == 0 {
		return
	}
	// A crash ends the commit at once, whoever asked for it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.ctx, cancel)()
	m.cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{m.topic: offs}, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil || resp == nil {
			return
		}
		now := time.Now()
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					continue
				}
				o := offs[p.Partition].Offset
				m.mu.Lock()
				m.committed[p.Partition] = o
				m.mu.Unlock()
				m.chk.Observe(groupcheck.Event{At: now, Member: m.name, Kind: groupcheck.Committed, Partition: p.Partition, First: o})
			}
		}
	})
}

func (m *member) assigned(_ context.Context, _ *kgo.Client, as map[string][]int32) {
	m.alive(func() {
		now := time.Now()
		m.mu.Lock()
		for _, p := range as[m.topic] {
			m.owned[p] = true
		}
		m.mu.Unlock()
		for _, p := range as[m.topic] {
			m.chk.Observe(groupcheck.Event{At: now, Member: m.name, Kind: groupcheck.Assigned, Partition: p})
		}
	})
}

// revoked commits what the member processed of the partitions it gives up,
// as applications do, before reporting them revoked.
func (m *member) revoked(ctx context.Context, _ *kgo.Client, rs map[string][]int32) {
	m.alive(func() {
		m.commit(ctx, rs[m.topic])
		m.gone(rs)
	})
}

// lost reports partitions taken away without a chance to commit.
func (m *member) lost(_ context.Context, _ *kgo.Client, ls map[string][]int32) {
	m.alive(func() { m.gone(ls) })
}

func (m *member) gone(ps map[string][]int32) {
	now := time.Now()
	m.mu.Lock()
	for _, p := range ps[m.topic] {
		delete(m.next, p)
		delete(m.committed, p)
		delete(m.owned, p)
	}
	m.mu.Unlock()
	for _, p := range ps[m.topic] {
		m.chk.Observe(groupcheck.Event{At: now, Member: m.name, Kind: groupcheck.Revoked, Partition: p})
	}
}
