package txncheck

import (
	"fmt"
	"time"
)

// Check names one of the checks.
type Check string

// The checks. Each counts transactions (or records), with witnesses.
const (
	// CheckAbortedRead: a read_committed reader saw a record of an
	// aborted transaction (Adya's G1a).
	CheckAbortedRead Check = "aborted-read"
	// CheckTorn: after the drain, some but not all of a transaction's
	// records are visible to a read_committed reader.
	CheckTorn Check = "torn-transaction"
	// CheckLostCommit: a transaction whose commit was acknowledged has
	// no record visible after the drain.
	CheckLostCommit Check = "lost-commit"
	// CheckDuplicate: a read_committed reader saw one record at two
	// offsets.
	CheckDuplicate Check = "duplicate"
	// CheckPrecommittedRead: a read_committed reader saw a record before
	// the client sent the EndTxn that committed it.
	CheckPrecommittedRead Check = "precommitted-read"
	// CheckZombieCommitted: a transaction held open past its timeout and
	// Kafka's abort interval was committed: its coordinator did not abort
	// it, or let its zombie producer through.
	CheckZombieCommitted Check = "zombie-committed"
	// CheckStuckLSO: a committed transaction became visible later after
	// its commit was acknowledged than Kafka's own timing allows (a
	// producer's transaction timeout and the coordinator's abort
	// interval): the last stable offset stuck.
	CheckStuckLSO Check = "stuck-lso"
)

// Checks lists every check, in the order a report shows them.
func Checks() []Check {
	return []Check{CheckAbortedRead, CheckTorn, CheckLostCommit, CheckDuplicate, CheckPrecommittedRead, CheckZombieCommitted, CheckStuckLSO}
}

// maxWitnesses is how many witnesses a check keeps.
const maxWitnesses = 10

// Witness is one instance of an anomaly.
type Witness struct {
	Check     Check     `json:"check"`
	Txn       Txn       `json:"txn"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	At        time.Time `json:"at"`
	// Detail says what was expected instead.
	Detail string `json:"detail,omitempty"`
}

func (w Witness) String() string {
	if w.Check == CheckCopiedTwice || w.Check == CheckNotCopied { // no transaction of the workload's
		return fmt.Sprintf("%s: partition %d offset %d: %s", w.Check, w.Partition, w.Offset, w.Detail)
	}
	return fmt.Sprintf("%s: %s partition %d offset %d at %s: %s", w.Check, w.Txn, w.Partition, w.Offset, w.At.Format("15:04:05.000"), w.Detail)
}

// Result is the verdict on the transactions of a run.
type Result struct {
	// Begun counts the transactions begun. Committed those whose commit
	// was acknowledged; Aborted those the client aborted, or that could
	// not commit (no EndTxn commit was sent); Unknown those whose commit
	// was sent but not confirmed (either outcome is allowed, but all or
	// nothing).
	Begun     uint64 `json:"begun"`
	Committed uint64 `json:"committed"`
	Aborted   uint64 `json:"aborted"`
	// AbortedUnasked counts the aborts the client did not choose (a
	// produce or the commit failed).
	AbortedUnasked uint64 `json:"abortedUnasked"`
	Unknown        uint64 `json:"unknown"`
	// Stalled counts the transactions held open past their timeout (a
	// zombie producer); StalledFenced those whose commit Kafka refused.
	Stalled       uint64 `json:"stalled,omitempty"`
	StalledFenced uint64 `json:"stalledFenced,omitempty"`
	// TransactionVersion is the cluster's finalized transaction.version
	// when the workload started (-1: unknown).
	TransactionVersion int16 `json:"transactionVersion"`
	// ControlAbortedReads counts the records of aborted transactions the
	// read_uncommitted reader saw. With none, the run cannot show an
	// aborted read; with no commit acknowledged, a lost or torn one:
	// Inconclusive says so.
	ControlAbortedReads uint64 `json:"controlAbortedReads"`
	Inconclusive        bool   `json:"inconclusive,omitempty"`
	// CommitP99 and CommitMax time the EndTxn commits, from send to
	// answer.
	CommitP99 time.Duration `json:"commitP99"`
	CommitMax time.Duration `json:"commitMax"`
	// LongestTxn is the longest from a transaction's begin to its end, as
	// its client saw it: a coordinator or leader that does not answer
	// holds the writes, not only the EndTxn.
	LongestTxn time.Duration `json:"longestTxn"`
	// VisibilitySkew is the longest time between the first and the last
	// record of one committed transaction becoming visible: Kafka writes
	// its markers partition by partition, so this is a figure, not an
	// anomaly. CommitToVisible is the longest from an acknowledged commit
	// to all its records visible.
	VisibilitySkew  time.Duration `json:"visibilitySkew"`
	CommitToVisible time.Duration `json:"commitToVisible"`
	// Counts holds each check's count (transactions, or records for
	// aborted and precommitted reads and duplicates); Witnesses up to
	// maxWitnesses of each.
	Counts    map[Check]uint64 `json:"counts"`
	Witnesses []Witness        `json:"witnesses,omitempty"`
	// DrainIncomplete: the readers did not reach the end of the run's
	// records, so what was not visible is unverified.
	DrainIncomplete bool `json:"drainIncomplete,omitempty"`
	// DrainError is why the drain gave up, if it did; Errors are what
	// ended producers or copiers early (a client that could not be made).
	DrainError string   `json:"drainError,omitempty"`
	Errors     []string `json:"errors,omitempty"`
	// Copy is the copy job's verdict, when the run had one.
	Copy *CopyResult `json:"copy,omitempty"`
	// Open lists the transactions still open on the workload's partitions
	// when a drain gave up, as kafka-transactions.sh find-hanging finds
	// them (DescribeProducers): one that no producer will finish pins the
	// last stable offset, and read_committed readers with it.
	Open []OpenTxn `json:"open,omitempty"`
}

// OpenTxn is a transaction a partition's leader holds open.
type OpenTxn struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	ProducerID  int64  `json:"producerId"`
	Epoch       int16  `json:"epoch"`
	StartOffset int64  `json:"startOffset"`
	// LastWrite is the producer's last write, in milliseconds since the
	// epoch, as the leader reports it.
	LastWrite int64 `json:"lastWrite"`
}

func (o OpenTxn) String() string {
	return fmt.Sprintf("%s/%d: producer %d epoch %d open from offset %d, last written %s", o.Topic, o.Partition, o.ProducerID, o.Epoch,
		o.StartOffset, time.UnixMilli(o.LastWrite).UTC().Format("15:04:05.000"))
}

// Total counts every anomaly.
func (r Result) Total() uint64 {
	var n uint64
	for _, c := range r.Counts {
		n += c
	}
	if r.Copy != nil {
		n += r.Copy.Total()
	}
	return n
}

// Clean reports no anomaly, and a run that could have shown one.
func (r Result) Clean() bool {
	return r.Total() == 0 && !r.Inconclusive && !r.DrainIncomplete && len(r.Errors) == 0 && (r.Copy == nil || r.Copy.Clean())
}

// Problems describes each check that found anything, and why a run
// proved less than it should.
func (r Result) Problems() []string {
	var out []string
	for _, c := range Checks() {
		if n := r.Counts[c]; n > 0 {
			out = append(out, fmt.Sprintf("%s: %d", c, n))
		}
	}
	if r.Inconclusive {
		out = append(out, fmt.Sprintf("inconclusive: the read_uncommitted control saw %d aborted records and %d commits were acknowledged; with none of either an aborted read, or a lost or torn commit, could not have shown",
			r.ControlAbortedReads, r.Committed))
	}
	if r.DrainIncomplete {
		out = append(out, "the readers did not reach the end of the run's transactions: "+r.DrainError)
	}
	for _, e := range r.Errors {
		out = append(out, "a client ended early: "+e)
	}
	for _, o := range r.Open {
		out = append(out, "open when the drain gave up: "+o.String())
	}
	if r.Copy != nil {
		for _, p := range r.Copy.Problems() {
			out = append(out, "copy job: "+p)
		}
	}
	return out
}
