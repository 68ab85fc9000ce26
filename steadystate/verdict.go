package steadystate

import (
	"fmt"
	"time"
)

// BoundKind names what a bound limits. Programs key on it; the Bound text
// of a Verdict is for people.
type BoundKind string

// The kinds of bound; each one's values are in the unit BoundKind.Unit
// returns.
const (
	// BoundMinThroughput: acknowledged records/s over the phase, at least.
	BoundMinThroughput BoundKind = "min-throughput"
	// BoundMinThroughputRatio: the phase's throughput as a fraction of
	// the baseline's, at least.
	BoundMinThroughputRatio BoundKind = "min-throughput-ratio"
	// BoundMaxP99Ack: p99 of send -> ack latency, at most.
	BoundMaxP99Ack BoundKind = "max-p99-ack"
	// BoundMaxP99E2E: p99 of intended send -> consumed latency, at most.
	BoundMaxP99E2E BoundKind = "max-p99-e2e"
	// BoundMaxUnavailability: the longest time with no ack, at most.
	BoundMaxUnavailability BoundKind = "max-unavailability"
	// BoundMaxPartitionStall: the longest time any one partition had no
	// ack, at most.
	BoundMaxPartitionStall BoundKind = "max-partition-stall"
	// BoundLostRecords, BoundDuplicateRecords, BoundReorderedRecords: the
	// records the verifier found so, at most (0).
	BoundLostRecords      BoundKind = "lost-records"
	BoundDuplicateRecords BoundKind = "duplicate-records"
	BoundReorderedRecords BoundKind = "reordered-records"
	// BoundInconsistentOffsets: acknowledged records consumed at another
	// offset than the acknowledged one, at most (0).
	BoundInconsistentOffsets BoundKind = "inconsistent-offsets"
	// BoundGroupAnomalies: what the application's consumer group's checks
	// found (groupcheck.Checks), at most (0).
	BoundGroupAnomalies BoundKind = "group-anomalies"
	// BoundTransactionAnomalies: what the transactional workload's checks
	// found (txncheck.Checks), at most (0); an inconclusive run (the
	// read_uncommitted control saw no aborted record) fails it too.
	BoundTransactionAnomalies BoundKind = "transaction-anomalies"
	// BoundJavaAnomalies: the checks that found something in what Kafka's
	// own Java clients beside the load said (javaclients.Result.Problems),
	// at most (0); a run not judged whole fails it too.
	BoundJavaAnomalies BoundKind = "java-anomalies"
	// BoundFinalDrain: acknowledged records the final drain left unread,
	// at most (0); how many is not known, so nothing is observed.
	BoundFinalDrain BoundKind = "final-drain"
)

// Unit is the unit of a bound's values.
type Unit string

// The units of the bounds.
const (
	UnitSeconds          Unit = "seconds"
	UnitRecordsPerSecond Unit = "records/s"
	UnitRatio            Unit = "ratio"
	UnitRecords          Unit = "records"
)

// Unit returns the unit of k's values; "" for an unknown kind.
func (k BoundKind) Unit() Unit {
	u, _, _ := k.describe()
	return u
}

// Min says whether k is a least value (min-throughput, ...), not a most.
func (k BoundKind) Min() bool {
	_, min, _ := k.describe()
	return min
}

// describe returns k's unit, whether it is a least value, and its name
// for people (Verdict.Bound).
func (k BoundKind) describe() (Unit, bool, string) {
	switch k {
	case BoundMinThroughput:
		return UnitRecordsPerSecond, true, "min throughput"
	case BoundMinThroughputRatio:
		return UnitRatio, true, "min throughput ratio to baseline"
	case BoundMaxP99Ack:
		return UnitSeconds, false, "max p99 ack latency"
	case BoundMaxP99E2E:
		return UnitSeconds, false, "max p99 end-to-end latency"
	case BoundMaxUnavailability:
		return UnitSeconds, false, "max unavailability"
	case BoundMaxPartitionStall:
		return UnitSeconds, false, "max partition stall"
	case BoundLostRecords:
		return UnitRecords, false, "lost records"
	case BoundDuplicateRecords:
		return UnitRecords, false, "duplicate records"
	case BoundReorderedRecords:
		return UnitRecords, false, "reordered records"
	case BoundInconsistentOffsets:
		return UnitRecords, false, "inconsistent offsets"
	case BoundGroupAnomalies:
		return UnitRecords, false, "consumer group anomalies"
	case BoundTransactionAnomalies:
		return UnitRecords, false, "transaction anomalies"
	case BoundJavaAnomalies:
		return UnitRecords, false, "Java client anomalies"
	case BoundFinalDrain:
		return UnitRecords, false, "final drain"
	}
	return "", false, string(k)
}

// Figures are a bound's outcome as numbers, for programs: what it bounds,
// in which unit, its limit and what was observed. Reports written before
// they existed have none: an empty Kind.
type Figures struct {
	Kind       BoundKind `json:"kind,omitempty"`
	Unit       Unit      `json:"unit,omitempty"`
	LimitValue float64   `json:"limitValue"`
	// ObservedValue is nil (JSON null) when nothing was observed: no ack,
	// or nothing consumed, in the phase; a phase too short to measure
	// throughput; a final drain that did not complete.
	ObservedValue *float64 `json:"observedValue"`
}

// Verdict is one bound's outcome, for the report. Bound, Limit and
// Observed say it for people (and for readers of older reports); Figures
// say it in numbers.
type Verdict struct {
	Phase    Phase  `json:"phase,omitempty"`
	Bound    string `json:"bound"`
	Limit    string `json:"limit"`
	Observed string `json:"observed"`
	Passed   bool   `json:"passed"`
	Figures
}

// Violation is one bound that did not hold.
type Violation struct {
	Phase    Phase     `json:"phase,omitempty"`
	Bound    string    `json:"bound"`
	Limit    string    `json:"limit"`
	Observed string    `json:"observed"`
	At       time.Time `json:"at"`
	Figures
}

func (v Violation) String() string {
	where := "run"
	if v.Phase != "" {
		where = "phase " + string(v.Phase)
	}
	return fmt.Sprintf("%s: %s observed %s, limit %s (at %s)", where, v.Bound, v.Observed, v.Limit, v.At.Format(time.RFC3339Nano))
}

// figure is one value of a bound with its text for people; value is nil
// when nothing was observed.
type figure struct {
	value *float64
	text  string
}

func seconds(d time.Duration) figure { return number(d.Seconds(), d.String()) }

func recordsPerSecond(r float64) figure { return number(r, fmt.Sprintf("%.1f records/s", r)) }

func ratio(r float64) figure { return number(r, fmt.Sprintf("%.2f", r)) }

func number(v float64, text string) figure { return figure{&v, text} }

// nothing is an observed figure of nothing measured.
func nothing(why string) figure { return figure{text: why} }

// newVerdict is the verdict on a bound of kind k in phase ph.
func newVerdict(ph Phase, k BoundKind, limit, observed figure, passed bool) Verdict {
	unit, _, name := k.describe()
	v := Verdict{Phase: ph, Bound: name, Limit: limit.text, Observed: observed.text, Passed: passed,
		Figures: Figures{Kind: k, Unit: unit, ObservedValue: observed.value}}
	if limit.value != nil {
		v.LimitValue = *limit.value
	}
	return v
}

// violation is v, which did not hold, at t.
func (v Verdict) violation(at time.Time) Violation {
	return Violation{Phase: v.Phase, Bound: v.Bound, Limit: v.Limit, Observed: v.Observed, At: at, Figures: v.Figures}
}
