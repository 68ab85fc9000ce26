package steadystate

import (
	"sync"
	"testing"
)

// ev is one event of a stream's history: an ack (the broker's offset for
// seq) or a read (the consumer's offset for seq), by producer index 0 in
// partition 0 unless p says otherwise.
type ev struct {
	ack    bool
	seq    uint64
	offset int64
	p      int32
}

func ack(seq uint64, off int64) ev  { return ev{ack: true, seq: seq, offset: off} }
func read(seq uint64, off int64) ev { return ev{seq: seq, offset: off} }

func TestOffsetMatcher(t *testing.T) {
	tests := []struct {
		name    string
		history []ev
		want    uint64
		// wantEx is the first witness, when want > 0.
		wantEx OffsetMismatch
	}{
		// Legitimate histories.
		{"acks before reads, each at its offset", []ev{ack(0, 0), ack(1, 3), read(0, 0), read(1, 3)}, 0, OffsetMismatch{}},
		{"reads before acks (the consumer sees a record before its producer's ack)", []ev{read(0, 5), read(1, 6), ack(0, 5), ack(1, 6)}, 0, OffsetMismatch{}},
		{"interleaved", []ev{ack(0, 0), read(0, 0), read(1, 2), ack(1, 2), ack(2, 9), read(2, 9)}, 0, OffsetMismatch{}},
		{"gaps of other producers' records and transaction markers between offsets", []ev{ack(0, 10), ack(1, 20), read(0, 10), read(1, 20)}, 0, OffsetMismatch{}},
		{"a record never acked, read (a failed send that landed)", []ev{read(0, 0), read(1, 1), ack(1, 1)}, 0, OffsetMismatch{}},
		{"a record acked, never read (lost: the verifier's to say)", []ev{ack(0, 0), ack(1, 1), read(1, 1)}, 0, OffsetMismatch{}},
		{"a duplicate copy read before its acked offset, then the acked one", []ev{ack(0, 4), read(0, 2), read(0, 4)}, 0, OffsetMismatch{}},
		{"a duplicate copy read before the ack, and the acked one", []ev{read(0, 2), read(0, 4), ack(0, 4)}, 0, OffsetMismatch{}},
		{"a batch written twice (a retry without idempotence), both copies read, then acked at the second", []ev{read(5, 100), read(6, 101), read(7, 102), read(8, 103), read(5, 104), read(6, 105), read(7, 106), read(8, 107), ack(5, 104), ack(6, 105), ack(7, 106), ack(8, 107)}, 0, OffsetMismatch{}},
		{"a batch written twice, acked at the second copy first, then both copies read", []ev{ack(5, 104), ack(6, 105), ack(7, 106), ack(8, 107), read(5, 100), read(6, 101), read(7, 102), read(8, 103), read(5, 104), read(6, 105), read(7, 106), read(8, 107)}, 0, OffsetMismatch{}},
		{"a batch written twice, acked at the first copy", []ev{ack(5, 100), ack(6, 101), read(5, 100), read(6, 101), read(5, 104), read(6, 105)}, 0, OffsetMismatch{}},
		{"another partition's stream is its own", []ev{{ack: true, seq: 0, offset: 7, p: 1}, read(0, 3), ack(0, 3), {seq: 0, offset: 7, p: 1}}, 0, OffsetMismatch{}},
		// Histories that must fail.
		{"read past its acked offset", []ev{ack(0, 4), read(0, 5)}, 1, OffsetMismatch{Seq: 0, AckedOffset: 4, ConsumedOffset: 5}},
		{"read past its acked offset, before the ack", []ev{read(0, 5), ack(0, 4)}, 1, OffsetMismatch{Seq: 0, AckedOffset: 4, ConsumedOffset: 5}},
		{"read before its acked offset, and the stream moved on", []ev{ack(0, 4), ack(1, 6), read(0, 2), read(1, 6)}, 1, OffsetMismatch{Seq: 0, AckedOffset: 4, ConsumedOffset: 2}},
		{"read before its acked offset, before the ack, then the stream moved on", []ev{read(0, 2), ack(0, 4), read(1, 6), ack(1, 6)}, 1, OffsetMismatch{Seq: 0, AckedOffset: 4, ConsumedOffset: 2}},
		{"read before its acked offset, and the run ended", []ev{ack(0, 4), read(0, 2)}, 1, OffsetMismatch{Seq: 0, AckedOffset: 4, ConsumedOffset: 2}},
		{"a batch written twice and acked at neither copy", []ev{ack(5, 110), read(5, 100), read(5, 104), read(6, 111)}, 1, OffsetMismatch{Seq: 5, AckedOffset: 110, ConsumedOffset: 100}},
		{"two records swapped in the log", []ev{ack(0, 0), ack(1, 1), read(1, 0), read(0, 1)}, 1, OffsetMismatch{Seq: 1, AckedOffset: 1, ConsumedOffset: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newOffsetMatcher(2, 1)
			for _, e := range tt.history {
				if e.ack {
					m.acked(e.p, 0, e.seq, e.offset)
				} else {
					m.consumed(e.p, 0, e.seq, e.offset)
				}
			}
			n, ex := m.verdict(7)
			if n != tt.want {
				t.Fatalf("%d inconsistent offsets, want %d: %+v", n, tt.want, ex)
			}
			if uint64(len(ex)) != n {
				t.Fatalf("%d witnesses for %d", len(ex), n)
			}
			if n > 0 {
				want := tt.wantEx
				want.Producer = 7 // the base, for index 0
				if ex[0] != want {
					t.Errorf("witness %+v, want %+v", ex[0], want)
				}
			}
		})
	}
}

func TestOffsetMatcherOutOfRange(t *testing.T) {
	m := newOffsetMatcher(1, 1)
	m.acked(-1, 0, 0, 0)
	m.acked(1, 0, 0, 0)
	m.consumed(0, 1, 0, 0)
	var nilMatcher *offsetMatcher
	nilMatcher.acked(0, 0, 0, 0)
	if n, _ := m.verdict(0); n != 0 {
		t.Errorf("out-of-range events counted: %d", n)
	}
	if n, _ := nilMatcher.verdict(0); n != 0 {
		t.Errorf("a nil matcher counted %d", n)
	}
}

// BenchmarkOffsetMatcher is the matcher's cost per record: one ack and one
// read, from two goroutines as in a run (a producer's promise and the
// consumer), over 6 partitions.
func BenchmarkOffsetMatcher(b *testing.B) {
	const partitions = 6
	m := newOffsetMatcher(partitions, 1)
	b.ReportAllocs()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range b.N {
			m.acked(int32(i%partitions), 0, uint64(i/partitions), int64(i/partitions))
		}
	}()
	go func() {
		defer wg.Done()
		for i := range b.N {
			m.consumed(int32(i%partitions), 0, uint64(i/partitions), int64(i/partitions))
		}
	}()
	wg.Wait()
	if n, _ := m.verdict(0); n != 0 {
		b.Fatalf("%d inconsistent offsets", n)
	}
}
