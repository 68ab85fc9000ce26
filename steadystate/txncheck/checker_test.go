package txncheck

import (
	"maps"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// step is one event of a hand-made history.
type step func(c *Checker)

func begin(p uint32, seq uint64, n int) step {
	return func(c *Checker) { c.Begin(Txn{p, seq}, n, t0) }
}
func commitSent(p uint32, seq uint64, ms int) step {
	return func(c *Checker) { c.CommitSent(Txn{p, seq}, at(ms)) }
}
func ended(p uint32, seq uint64, o Outcome, unasked bool, ms int) step {
	return func(c *Checker) { c.Ended(Txn{p, seq}, o, unasked, at(ms)) }
}

func stalled(p uint32, seq uint64) step {
	return func(c *Checker) { c.Stalled(Txn{p, seq}) }
}

// reads reads records from..to-1 of a transaction at level, record i at
// partition i and offset off+i, at ms.
func reads(level Level, p uint32, seq uint64, from, to int, off int64, ms int) step {
	return func(c *Checker) {
		for i := from; i < to; i++ {
			c.Read(level, Txn{p, seq}, i, int32(i), off+int64(i), at(ms))
		}
	}
}

// committed is a whole committed transaction of 3 records, read by both
// readers 50 ms after its commit was acknowledged.
func committed(p uint32, seq uint64, ms int) []step {
	off := int64(seq) * 10
	return []step{begin(p, seq, 3), commitSent(p, seq, ms), ended(p, seq, Committed, false, ms+20),
		reads(ReadCommitted, p, seq, 0, 3, off, ms+70), reads(ReadUncommitted, p, seq, 0, 3, off, ms+10)}
}

// aborted is an aborted transaction of 3 records, which the
// read_uncommitted reader saw.
func aborted(p uint32, seq uint64, ms int) []step {
	return []step{begin(p, seq, 3), ended(p, seq, Aborted, false, ms), reads(ReadUncommitted, p, seq, 0, 3, int64(seq)*10, ms-10)}
}

func history(parts ...[]step) []step { return slices.Concat(parts...) }

func TestChecker(t *testing.T) {
	tests := []struct {
		name         string
		steps        []step
		drained      bool
		want         map[Check]uint64
		inconclusive bool
		check        func(t *testing.T, r Result)
	}{
		{
			name:    "committed and aborted, each seen as promised",
			steps:   history(committed(1, 1, 1000), aborted(1, 2, 2000), committed(2, 1, 1500)),
			drained: true,
			check: func(t *testing.T, r Result) {
				if r.Begun != 3 || r.Committed != 2 || r.Aborted != 1 || r.ControlAbortedReads != 3 || r.CommitMax != 20*time.Millisecond ||
					r.LongestTxn != 2*time.Second {
					t.Errorf("figures %+v", r)
				}
			},
		},
		{
			name: "visibility skew: the markers land partition by partition",
			steps: history(aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), ended(1, 1, Committed, false, 1020),
				reads(ReadCommitted, 1, 1, 0, 1, 0, 1030), reads(ReadCommitted, 1, 1, 1, 3, 0, 1900)}),
			drained: true,
			check: func(t *testing.T, r Result) {
				if r.VisibilitySkew != 870*time.Millisecond || r.CommitToVisible != 880*time.Millisecond {
					t.Errorf("skew %s, commit to visible %s; want 870ms and 880ms", r.VisibilitySkew, r.CommitToVisible)
				}
			},
		},
		{
			name: "a marker visible before the EndTxn answer came back",
			steps: history(aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), reads(ReadCommitted, 1, 1, 0, 3, 0, 1005),
				ended(1, 1, Committed, false, 1200)}),
			drained: true,
		},
		{
			name: "a retried ambiguous commit: unknown, then the records again in a new attempt",
			steps: history(aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), reads(ReadCommitted, 1, 1, 0, 3, 0, 1100),
				ended(1, 1, Unknown, false, 1200)}, committed(1, 2, 1300),
				[]step{begin(1, 3, 3), commitSent(1, 3, 2000), ended(1, 3, Unknown, false, 2100)}),
			drained: true,
			check: func(t *testing.T, r Result) {
				if r.Unknown != 2 || r.Committed != 1 {
					t.Errorf("unknown %d committed %d, want 2 and 1", r.Unknown, r.Committed)
				}
			},
		},
		{
			name:    "an aborted record read at read_committed",
			steps:   history(committed(2, 50, 100), aborted(1, 1, 1000), []step{reads(ReadCommitted, 1, 1, 2, 3, 10, 1100)}),
			drained: true,
			want:    map[Check]uint64{CheckAbortedRead: 1},
		},
		{
			name:    "a transaction never ended and never committed is aborted: its record read is an aborted read",
			steps:   history(committed(2, 50, 100), aborted(2, 1, 100), []step{begin(1, 1, 3), reads(ReadCommitted, 1, 1, 0, 1, 0, 1100)}),
			drained: true,
			want:    map[Check]uint64{CheckAbortedRead: 1},
		},
		{
			name:    "half a transaction visible",
			steps:   history(aborted(1, 9, 500), []step{begin(1, 1, 4), commitSent(1, 1, 1000), ended(1, 1, Committed, false, 1020), reads(ReadCommitted, 1, 1, 0, 2, 0, 1100)}),
			drained: true,
			want:    map[Check]uint64{CheckTorn: 1},
		},
		{
			name:    "an acknowledged commit with nothing visible",
			steps:   history(aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), ended(1, 1, Committed, false, 1020)}),
			drained: true,
			want:    map[Check]uint64{CheckLostCommit: 1},
		},
		{
			name:    "one record at two offsets",
			steps:   history(aborted(1, 9, 500), committed(1, 1, 1000), []step{reads(ReadCommitted, 1, 1, 1, 2, 40, 1200)}),
			drained: true,
			want:    map[Check]uint64{CheckDuplicate: 1},
		},
		{
			name:    "a record refetched at its own offset is no duplicate",
			steps:   history(aborted(1, 9, 500), committed(1, 1, 1000), []step{reads(ReadCommitted, 1, 1, 1, 2, 10, 1200)}),
			drained: true,
		},
		{
			name: "a record visible before its commit was sent",
			steps: history(aborted(1, 9, 500), []step{begin(1, 1, 3), reads(ReadCommitted, 1, 1, 0, 1, 0, 900), commitSent(1, 1, 1000),
				ended(1, 1, Committed, false, 1020), reads(ReadCommitted, 1, 1, 1, 3, 0, 1100)}),
			drained: true,
			want:    map[Check]uint64{CheckPrecommittedRead: 1},
		},
		{
			name: "a stuck last stable offset",
			steps: history(aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), ended(1, 1, Committed, false, 1020),
				reads(ReadCommitted, 1, 1, 0, 3, 0, 80_000)}),
			drained: true,
			want:    map[Check]uint64{CheckStuckLSO: 1},
		},
		{
			name: "a zombie fenced: its commit refused, its records never visible",
			steps: history(committed(2, 50, 100), aborted(1, 9, 500), []step{begin(1, 1, 3), stalled(1, 1), reads(ReadUncommitted, 1, 1, 0, 3, 0, 100),
				commitSent(1, 1, 60_000), ended(1, 1, Aborted, true, 60_010)}),
			drained: true,
			check: func(t *testing.T, r Result) {
				if r.Stalled != 1 || r.StalledFenced != 1 {
					t.Errorf("stalled %d fenced %d, want 1 and 1", r.Stalled, r.StalledFenced)
				}
			},
		},
		{
			name: "a zombie's commit acknowledged",
			steps: history(committed(2, 50, 100), aborted(1, 9, 500), []step{begin(1, 1, 3), stalled(1, 1), commitSent(1, 1, 60_000), ended(1, 1, Committed, false, 60_010),
				reads(ReadCommitted, 1, 1, 0, 3, 0, 60_050)}),
			drained: true,
			want:    map[Check]uint64{CheckZombieCommitted: 1},
		},
		{
			name: "a zombie's commit unconfirmed, its records visible all the same",
			steps: history(committed(2, 50, 100), aborted(1, 9, 500), []step{begin(1, 1, 3), stalled(1, 1), commitSent(1, 1, 60_000),
				ended(1, 1, Unknown, false, 60_010), reads(ReadCommitted, 1, 1, 0, 3, 0, 60_050)}),
			drained: true,
			want:    map[Check]uint64{CheckZombieCommitted: 1},
		},
		{
			name:         "no commit acknowledged: inconclusive",
			steps:        history(aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), ended(1, 1, Unknown, false, 1020)}),
			drained:      true,
			inconclusive: true,
		},
		{
			name: "an undrained run leaves what was not read yet unverified, not lost",
			steps: history(committed(2, 50, 100), aborted(1, 9, 500), []step{begin(1, 1, 3), commitSent(1, 1, 1000), ended(1, 1, Committed, false, 1020),
				reads(ReadCommitted, 1, 1, 0, 1, 0, 1100)}),
			check: func(t *testing.T, r Result) {
				if r.Clean() || !r.DrainIncomplete {
					t.Errorf("clean %v, drain incomplete %v: an undrained run is not clean", r.Clean(), r.DrainIncomplete)
				}
			},
		},
		{
			name:         "no aborted record seen by the control: inconclusive",
			steps:        history(committed(1, 1, 1000), []step{begin(1, 2, 3), ended(1, 2, Aborted, true, 2000)}),
			drained:      true,
			inconclusive: true,
			check: func(t *testing.T, r Result) {
				if r.AbortedUnasked != 1 || r.Clean() {
					t.Errorf("unasked aborts %d, clean %v; want 1, not clean", r.AbortedUnasked, r.Clean())
				}
			},
		},
		{
			name:  "an undrained run is not clean",
			steps: history(committed(1, 1, 1000), aborted(1, 2, 2000)),
			check: func(t *testing.T, r Result) {
				if r.Clean() || len(r.Problems()) != 1 {
					t.Errorf("clean %v, problems %q; want not clean, one problem", r.Clean(), r.Problems())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{StuckAfter: 65 * time.Second})
			for _, s := range tt.steps {
				s(c)
			}
			r := c.Result(tt.drained)
			want := tt.want
			if want == nil {
				want = map[Check]uint64{}
			}
			if !maps.Equal(r.Counts, want) {
				t.Errorf("counts %v, want %v; witnesses %v", r.Counts, want, r.Witnesses)
			}
			if r.Inconclusive != tt.inconclusive {
				t.Errorf("inconclusive %v, want %v", r.Inconclusive, tt.inconclusive)
			}
			if got := uint64(len(r.Witnesses)); got != min(r.Total(), maxWitnesses) {
				t.Errorf("%d witnesses for %d anomalies", got, r.Total())
			}
			if tt.check != nil {
				tt.check(t, r)
			}
			if again := c.Result(tt.drained); len(again.Witnesses) != len(r.Witnesses) {
				t.Errorf("a second Result has %d witnesses, the first %d", len(again.Witnesses), len(r.Witnesses))
			}
		})
	}
}
