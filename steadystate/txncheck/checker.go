package txncheck

import (
	"fmt"
	"sync"
	"time"
)

// Txn names one transaction attempt: the producer (one transactional ID)
// and its attempt's sequence. A retry is a new attempt, so a duplicate the
// workload made is told apart from one Kafka made.
type Txn struct {
	Producer uint32 `json:"producer"`
	Seq      uint64 `json:"seq"`
}

func (t Txn) String() string { return fmt.Sprintf("producer %d txn %d", t.Producer, t.Seq) }

// Outcome is how a transaction ended, as its client knows it.
type Outcome int

func (o Outcome) String() string {
	switch o {
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	case Unknown:
		return "an unconfirmed commit"
	}
	return "nothing (still open)"
}

// The outcomes.
const (
	// Open: not ended yet. At the end of a run, an open transaction is
	// judged aborted if its commit was never sent, and unknown if it was.
	Open Outcome = iota
	// Committed: the EndTxn commit was acknowledged.
	Committed
	// Aborted: aborted, or never sent a commit (the coordinator can only
	// abort it).
	Aborted
	// Unknown: the commit was sent, and not confirmed.
	Unknown
)

// Level is a reader's isolation level.
type Level int

// The levels.
const (
	ReadCommitted Level = iota
	ReadUncommitted
)

// Config tunes the checker.
type Config struct {
	// StuckAfter is the longest an acknowledged commit may take to become
	// visible: a stuck last stable offset beyond it. 0 checks nothing.
	StuckAfter time.Duration
}

// read is where and when a read_committed reader first saw a record.
type read struct {
	partition int32
	offset    int64
	at        time.Time
}

type txnState struct {
	records    int
	begun      time.Time
	commitSent time.Time
	ended      time.Time
	outcome    Outcome
	unasked    bool
	stalled    bool         // held open past its timeout before its commit
	seen       map[int]read // by index in the transaction
	control    int          // records the read_uncommitted reader saw
}

// Checker collects a run's history. It is safe for concurrent use.
type Checker struct {
	cfg       Config
	mu        sync.Mutex
	txns      map[Txn]*txnState
	commits   []time.Duration
	longest   time.Duration // from a transaction's begin to its end
	dups      uint64
	witnesses []Witness
	perCheck  map[Check]int
}

// New returns an empty checker.
func New(cfg Config) *Checker {
	return &Checker{cfg: cfg, txns: map[Txn]*txnState{}, perCheck: map[Check]int{}}
}

// Begin records a transaction, begun at, that will write records
// records.
func (c *Checker) Begin(t Txn, records int, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txns[t] = &txnState{records: records, begun: at, seen: map[int]read{}}
}

// Stalled records that t is held open past its timeout before its commit:
// the coordinator must abort it, and refuse the commit.
func (c *Checker) Stalled(t Txn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.txns[t]; s != nil {
		s.stalled = true
	}
}

// CommitSent records when the client sent the EndTxn that commits t.
func (c *Checker) CommitSent(t Txn, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.txns[t]; s != nil {
		s.commitSent = at
	}
}

// Ended records how t ended; unasked when the client had not chosen that
// outcome (an abort after a failed produce or commit).
func (c *Checker) Ended(t Txn, o Outcome, unasked bool, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.txns[t]
	if s == nil {
		return
	}
	s.outcome, s.unasked, s.ended = o, unasked, at
	c.longest = max(c.longest, at.Sub(s.begun))
	if o == Committed && !s.commitSent.IsZero() {
		c.commits = append(c.commits, at.Sub(s.commitSent))
	}
}

// Read records that a reader at level saw record index of t at
// partition/offset. Records of transactions never begun (another run's)
// are ignored.
func (c *Checker) Read(level Level, t Txn, index int, partition int32, offset int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.txns[t]
	if s == nil {
		return
	}
	if level == ReadUncommitted {
		s.control++
		return
	}
	prev, ok := s.seen[index]
	switch {
	case !ok:
		s.seen[index] = read{partition, offset, at}
	case prev.partition != partition || prev.offset != offset:
		c.dups++
		keep(c.perCheck, &c.witnesses, Witness{Check: CheckDuplicate, Txn: t, Partition: partition, Offset: offset, At: at,
			Detail: fmt.Sprintf("record %d first read at partition %d offset %d", index, prev.partition, prev.offset)})
	}
}

// keep appends w to ws if its check has room, as counted in per.
func keep(per map[Check]int, ws *[]Witness, w Witness) {
	if per[w.Check] < maxWitnesses {
		per[w.Check]++
		*ws = append(*ws, w)
	}
}
