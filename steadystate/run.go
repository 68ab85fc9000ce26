package steadystate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/steadystate/txn"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

const (
	// consumerPoll bounds one poll of the consumer's fetches.
	consumerPoll = 250 * time.Millisecond
	// abortFlushTimeout bounds the flush after ctx was cancelled.
	abortFlushTimeout = 5 * time.Second
)

// Runner runs one steady-state workload. Create it with New, run it once
// with Run, and, from other goroutines, mark phases with Mark and end the
// load with Stop.
type Runner struct {
	cfg Config
	obs Observer // cfg.Observer, or one that does nothing

	stopOnce sync.Once
	stop     chan struct{}
	started  chan struct{} // closed when the producers start sending

	mu       sync.Mutex
	marks    []Mark
	start    time.Time
	measured *Measurements // set when Run has a report

	reserved atomic.Int64 // sends reserved against NumRecords
	sent     atomic.Int64
	acked    atomic.Int64
	failed   atomic.Int64
	consumed atomic.Int64
}

// New validates cfg and returns a Runner. Errors wrap ErrInvalidConfig.
func New(cfg Config) (*Runner, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.RunID == 0 {
		cfg.RunID = rand.Uint64() | 1
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	return &Runner{cfg: cfg, obs: obs, stop: make(chan struct{}), started: make(chan struct{})}, nil
}

// Config returns the runner's configuration with defaults applied.
func (r *Runner) Config() Config { return r.cfg }

// Mark starts phase p now.
func (r *Runner) Mark(p Phase) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks = append(r.marks, Mark{Phase: p, At: time.Now()})
	r.obs.Phase(p)
}

// Stop ends the load: producers stop sending, flush, and the consumer drains.
// It is safe to call more than once and from any goroutine.
func (r *Runner) Stop() { r.stopOnce.Do(func() { close(r.stop) }) }

// Started is closed when the topic is ready and the producers start
// sending. It stays open when Run fails before that.
func (r *Runner) Started() <-chan struct{} { return r.started }

// Progress is a live snapshot of a run.
type Progress struct {
	Elapsed  time.Duration
	Sent     int64
	Acked    int64
	Failed   int64
	Consumed int64
}

// Progress returns the counters so far; it is cheap and safe to call often.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	start := r.start
	r.mu.Unlock()
	p := Progress{Sent: r.sent.Load(), Acked: r.acked.Load(), Failed: r.failed.Load(), Consumed: r.consumed.Load()}
	if !start.IsZero() {
		p.Elapsed = time.Since(start)
	}
	return p
}

// MetadataMinAge is the least time between two metadata requests of a
// client of the run. franz-go's default is 5 s: after a partition's leader
// moved, its records waited up to that long to learn it. Measured on a pod
// kill (2026-12-06): the worst partition stalled 1.8-3.9 s past the move
// with the default, 0.7-1.1 s with 500 ms. Kafka's own producer asks again
// after retry.backoff.ms (100 ms, growing to retry.backoff.max.ms, 1 s), so
// 500 ms keeps a stall Kafka's, at a few more metadata requests while
// leaders move.
const MetadataMinAge = 500 * time.Millisecond

// baseOpts are the franz-go options every client of the run shares.
func (r *Runner) baseOpts() []kgo.Opt {
	c := r.cfg
	opts := []kgo.Opt{kgo.SeedBrokers(c.Bootstrap...), kgo.MetadataMinAge(MetadataMinAge)}
	opts = append(opts, kafkasec.Resolved{TLS: c.TLS, SASL: c.SASL}.Opts()...)
	return append(opts, c.ClientOpts...)
}

// Run creates the topic if needed, runs the load until the duration, the
// record count or Stop ends it, drains the consumer and returns the report,
// which is Merge of the run's Measurements. When ctx is cancelled the load
// ends at once, the drain is skipped, and the partial report is returned
// with ctx's error. Run must be called once.
//
// A function over 80 lines: its steps (start, load, flush, drain, measure)
// share the run's clients, recorders and drain target, and read in the
// order they happen; splitting it into a run struct is the next step when
// it grows again.
func (r *Runner) Run(ctx context.Context) (*Report, error) {
	c := r.cfg
	admCl, err := kgo.NewClient(r.baseOpts()...)
	if err != nil {
		return nil, fmt.Errorf("steadystate: admin client: %w", err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)

	partitions, err := r.ensureTopic(ctx, adm, c.Topic)
	if err != nil {
		return nil, err
	}
	startOffsets, err := endOffsets(ctx, adm, c.Topic, partitions)
	if err != nil {
		return nil, err
	}

	start := time.Now()
	r.mu.Lock()
	r.start = start
	if len(r.marks) == 0 {
		r.obs.Phase(PhaseBaseline) // as phaseAt counts the seconds before the first mark
	}
	r.mu.Unlock()
	gapMin := 100 * time.Millisecond
	if c.Rate > 0 {
		gapMin = max(gapMin, 5*time.Duration(float64(time.Second)*float64(c.Producers)/float64(c.Rate)))
	}

	// The run's consumer group starts exactly at the offsets listed before
	// the first send: commit them before the group exists.
	if err := commitStart(ctx, adm, fmtGroup(c.RunID, c.ProducerBase), c.Topic, startOffsets); err != nil {
		return nil, err
	}
	// The consumer runs until it has read everything up to the drain
	// target, or drainCtx ends.
	cons, err := r.newConsumer(start, partitions, startOffsets)
	if err != nil {
		return nil, err
	}
	// With acks=0 the broker names no offset (franz-go reports each
	// record's index in its batch): nothing to match.
	var match *offsetMatcher
	if c.Acks != AcksNone {
		match = newOffsetMatcher(int(partitions), c.Producers)
	}
	cons.ver.match = match
	var group *appGroup
	if c.Group.Members > 0 {
		if group, err = r.startAppGroup(ctx, adm, start, startOffsets); err != nil {
			cons.cl.Close()
			return nil, err
		}
		defer group.close()
	}
	var txns *txn.Workload
	if c.Transactions.Producers > 0 {
		if txns, err = r.startTransactions(ctx, adm, startOffsets); err != nil {
			cons.cl.Close()
			return nil, err
		}
		defer txns.Close()
	}
	var java *javaRun
	if c.Java.Members > 0 {
		if java, err = r.startJava(ctx, adm); err != nil {
			cons.cl.Close()
			return nil, err
		}
		defer java.close()
	}
	drainCtx, cancelDrain := context.WithCancel(ctx)
	defer cancelDrain()
	consDone := make(chan struct{})
	go func() {
		defer close(consDone)
		cons.run(drainCtx, &r.consumed)
	}()

	// Producers.
	prods := make([]*producer, c.Producers)
	for i := range prods {
		p, err := r.newProducer(c.ProducerBase+uint32(i), start, partitions, gapMin)
		if err != nil {
			r.Stop()
			cancelDrain()
			<-consDone
			for _, p := range prods[:i] {
				p.cl.Close()
			}
			return nil, err
		}
		p.match, p.base = match, c.ProducerBase
		if group != nil && c.Acks != AcksNone {
			p.group = group.chk
		}
		prods[i] = p
	}
	if c.Duration > 0 {
		t := time.AfterFunc(c.Duration, r.Stop)
		defer t.Stop()
	}
	close(r.started)
	var wg sync.WaitGroup
	for _, p := range prods {
		wg.Go(func() { p.run(ctx, r) })
	}
	wg.Wait()
	loadEnd := time.Now()
	if txns != nil {
		txns.Stop()
	}
	for _, p := range prods {
		p.rec.finish(loadEnd)
	}

	// Flush. Close fails whatever is still buffered; inflight then waits
	// until every promise has run, even when the flush was cut short.
	flushTimeout := c.ProduceTimeout + 10*time.Second
	if ctx.Err() != nil {
		flushTimeout = abortFlushTimeout
	}
	flushCtx, cancelFlush := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	var flushErr error
	for _, p := range prods {
		if err := p.cl.Flush(flushCtx); err != nil {
			flushErr = fmt.Errorf("steadystate: producer %d flush: %w", p.id, err)
		}
		p.cl.Close()
		p.inflight.Wait()
	}
	cancelFlush()
	end := time.Now()
	for _, p := range prods {
		p.ackRec.finish(end)
		for _, g := range p.partGaps {
			g.finish(end)
		}
	}

	// Drain: read everything up to the high watermark after the flush, and
	// at least past the highest offset each partition acked (with acks=1 a
	// leader acks above the high watermark).
	var drainErr error
	var inputEnd []int64 // the copy job's: the workload topic's end
	if ctx.Err() == nil {
		target, err := endOffsets(ctx, adm, c.Topic, partitions)
		if err != nil {
			drainErr = err
			cancelDrain()
		} else {
			// The copy job's input ends where the log ends, what a
			// read_committed copier can ever read: not at an offset acked
			// above the high watermark (acks=1), which a truncation drops.
			inputEnd = slices.Clone(target)
			for _, p := range prods {
				for part, off := range p.acks.maxOffs {
					target[part] = max(target[part], off+1)
				}
			}
			cons.setTarget(target)
			select {
			case <-consDone:
			case <-time.After(c.DrainTimeout):
				drainErr = fmt.Errorf("steadystate: drain did not reach the end offsets within %s", c.DrainTimeout)
			}
			if group != nil && drainErr == nil {
				drainErr = group.drain(ctx, target, c.DrainTimeout)
			}
		}
	} else {
		drainErr = errors.New("steadystate: the run was aborted before the final drain")
	}
	cancelDrain()
	<-consDone
	cons.cl.Close()
	cons.rec.finish(end)

	var txnRes *txncheck.Result
	if txns != nil {
		txnRes = drainTransactions(ctx, txns, c.Transactions, c.DrainTimeout, inputEnd)
	}
	var javaRes *javaclients.Result
	if java != nil && ctx.Err() == nil {
		javaRes = java.finish(ctx, adm, c.DrainTimeout)
	}
	m := Measurements{
		RunID:        fmtRunID(c.RunID),
		Topic:        c.Topic,
		ProducerBase: c.ProducerBase,
		Producers:    c.Producers,
		Rate:         c.Rate,
		RecordSize:   c.RecordSize,
		Acks:         c.Acks,
		Idempotent:   !c.NoIdempotence,
		// Wall clock only (Round(0) drops the monotonic reading), so the
		// report is the same whether or not the measurements went through
		// JSON, as they do from an agent.
		Start:   start.Round(0),
		LoadEnd: loadEnd.Round(0),
		End:     end.Round(0),

		Transactions: txnRes,
		Java:         javaRes,
	}
	r.mu.Lock()
	for _, mk := range r.marks {
		m.Marks = append(m.Marks, Mark{Phase: mk.Phase, At: mk.At.Round(0)})
	}
	r.mu.Unlock()
	recorders := []*recorder{cons.rec}
	acks := make([]*ackLog, len(prods))
	for i, p := range prods {
		recorders = append(recorders, p.rec, p.ackRec)
		m.AckGaps = append(m.AckGaps, p.ackRec.gaps.wallClock())
		byPart := make([][]Gap, len(p.partGaps))
		for j, g := range p.partGaps {
			byPart[j] = g.wallClock()
		}
		m.PartitionAckGaps = append(m.PartitionAckGaps, byPart)
		acks[i] = p.acks
	}
	m.Seconds = mergeSealed(recorders)
	m.Records = cons.ver.verdict(acks)
	if group != nil {
		// The verdict first: the members' leaving (revocations) is not
		// part of the run.
		res := group.chk.Result(end)
		res.Lag = group.lagFigures(m.Marks, loadEnd)
		m.Group = &res
		group.close()
	}
	r.obs.Lost(m.Records.Lost)
	m.Records.DrainIncomplete = drainErr != nil
	if drainErr != nil {
		m.DrainError = drainErr.Error()
	}
	r.mu.Lock()
	r.measured = &m
	r.mu.Unlock()
	rep, err := Merge([]Measurements{m}, m.Marks, *c.Hypothesis)
	if err != nil {
		return nil, fmt.Errorf("steadystate: report: %w", err) // cannot happen: one runner's measurements merge
	}
	return rep, errors.Join(ctx.Err(), flushErr)
}
