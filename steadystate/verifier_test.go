package steadystate

import (
	"reflect"
	"runtime"
	"testing"
	"time"
)

func TestVerifier(t *testing.T) {
	const run = 42
	type ev struct {
		p    int32
		off  int64
		prod uint32
		seq  uint64
		run  uint64
	}
	tests := []struct {
		name  string
		base  uint32             // the verifier's first producer ID
		acked map[int32][]uint64 // producer base
		cons  []ev
		want  Records
		lost  []LostRange // when given, the lost examples
	}{
		{
			name:  "clean",
			acked: map[int32][]uint64{0: {0, 1, 2}, 1: {0, 1}},
			cons:  []ev{{0, 0, 0, 0, run}, {1, 0, 0, 0, run}, {0, 1, 0, 1, run}, {1, 1, 0, 1, run}, {0, 2, 0, 2, run}},
			want:  Records{Acked: 5, Consumed: 5},
		},
		{
			name:  "lost in the middle",
			acked: map[int32][]uint64{0: {0, 1, 2, 3}},
			cons:  []ev{{0, 0, 0, 0, run}, {0, 1, 0, 3, run}},
			want:  Records{Acked: 4, Consumed: 2, Lost: 2},
		},
		{
			name:  "duplicate at another offset",
			acked: map[int32][]uint64{0: {0, 1}},
			cons:  []ev{{0, 0, 0, 0, run}, {0, 1, 0, 1, run}, {0, 2, 0, 1, run}},
			want:  Records{Acked: 2, Consumed: 2, Duplicates: 1},
		},
		{
			name:  "redelivered offset is not a duplicate",
			acked: map[int32][]uint64{0: {0, 1}},
			cons:  []ev{{0, 0, 0, 0, run}, {0, 1, 0, 1, run}, {0, 0, 0, 0, run}, {0, 1, 0, 1, run}},
			want:  Records{Acked: 2, Consumed: 2, Redelivered: 2},
		},
		{
			name:  "reordered",
			acked: map[int32][]uint64{0: {0, 1, 2}},
			cons:  []ev{{0, 0, 0, 0, run}, {0, 1, 0, 2, run}, {0, 2, 0, 1, run}},
			want:  Records{Acked: 3, Consumed: 3, Reordered: 1},
		},
		{
			name:  "unacked but written, a foreign run, and another producer of the run",
			acked: map[int32][]uint64{0: {0}},
			cons:  []ev{{0, 0, 0, 0, run}, {0, 1, 0, 1, run}, {0, 2, 0, 0, 7}, {0, 3, 5, 0, run}},
			want:  Records{Acked: 1, Consumed: 2, UnackedSeen: 1, Foreign: 1, OtherProducers: 1},
		},
		{
			name:  "producer range from a base",
			base:  4,
			acked: map[int32][]uint64{0: {0, 1}},
			cons:  []ev{{0, 0, 4, 0, run}, {0, 1, 0, 0, run}, {0, 2, 5, 0, run}, {0, 3, 3, 0, run}, {0, 4, 4, 1, run}},
			want:  Records{Acked: 2, Consumed: 2, OtherProducers: 3},
		},
		{
			name:  "loss names the producer by its ID",
			base:  4,
			acked: map[int32][]uint64{1: {0, 1}},
			cons:  []ev{{1, 0, 4, 0, run}},
			want:  Records{Acked: 2, Consumed: 1, Lost: 1},
			lost:  []LostRange{{Partition: 1, Producer: 4, FirstSeq: 1, LastSeq: 1, Count: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVerifier(run, 2, 1)
			v.base = tt.base
			a := newAckLog(2)
			for p, seqs := range tt.acked {
				for _, s := range seqs {
					a.ack(p, s, 0)
				}
			}
			for _, e := range tt.cons {
				v.consume(e.p, e.off, header{RunID: e.run, Producer: e.prod, Seq: e.seq})
			}
			got := v.verdict([]*ackLog{a})
			if tt.lost != nil && !reflect.DeepEqual(got.LostExamples, tt.lost) {
				t.Errorf("lost examples %+v, want %+v", got.LostExamples, tt.lost)
			}
			got.LostExamples, got.DuplicateExamples, got.ReorderExamples = nil, nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := header{RunID: 0xdeadbeef, Producer: 7, Seq: 1 << 40, Intended: time.Now().UnixNano()}
	buf := make([]byte, HeaderSize)
	h.encode(buf)
	got, err := decodeHeader(buf)
	if err != nil || got != h {
		t.Fatalf("decode = %+v, %v; want %+v", got, err, h)
	}
	if _, err := decodeHeader(buf[:HeaderSize-1]); err == nil {
		t.Errorf("short value decoded")
	}
	if _, err := decodeHeader([]byte("plain text value that is long enough")); err == nil {
		t.Errorf("foreign value decoded")
	}
}

// Ten million records pass through the verifier with bounded heap growth:
// memory is O(partitions + anomalies), not O(records).
func TestVerifierMemoryTenMillion(t *testing.T) {
	const (
		records    = 10_000_000
		partitions = 6
		producers  = 3
		maxGrowth  = 64 << 20
	)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	v := newVerifier(1, partitions, producers)
	acks := make([]*ackLog, producers)
	for i := range acks {
		acks[i] = newAckLog(partitions)
	}
	var seqs [partitions][producers]uint64
	offsets := make([]int64, partitions)
	var peak uint64
	for i := range records {
		p, prod := int32(i%partitions), uint32(i/partitions%producers)
		s := seqs[p][prod]
		seqs[p][prod]++
		// Every 100,000th acked record is never consumed: a few anomalies.
		acks[prod].ack(p, s, 0)
		if i%100_000 != 0 {
			v.consume(p, offsets[p], header{RunID: 1, Producer: prod, Seq: s})
			offsets[p]++
		}
		if i%1_000_000 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}
	res := v.verdict(acks)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	peak = max(peak, after.HeapAlloc)
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("10M records: heap growth %.1f MiB (peak), lost %d", float64(growth)/(1<<20), res.Lost)
	if res.Lost != records/100_000 || res.Consumed != records-records/100_000 || res.Duplicates != 0 || res.Reordered != 0 {
		t.Errorf("verdict %+v", res)
	}
	if growth > maxGrowth {
		t.Errorf("heap grew %d bytes over 10M records, limit %d", growth, maxGrowth)
	}
}

func BenchmarkVerifierConsume(b *testing.B) {
	const partitions, producers = 6, 3
	v := newVerifier(1, partitions, producers)
	var seqs [partitions][producers]uint64
	offsets := make([]int64, partitions)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p, prod := int32(i%partitions), uint32(i/partitions%producers)
		s := seqs[p][prod]
		seqs[p][prod]++
		v.consume(p, offsets[p], header{RunID: 1, Producer: prod, Seq: s})
		offsets[p]++
	}
}

func BenchmarkAckLog(b *testing.B) {
	const partitions = 6
	a := newAckLog(partitions)
	var seqs [partitions]uint64
	b.ReportAllocs()
	for i := range b.N {
		p := int32(i % partitions)
		a.ack(p, seqs[p], 0)
		seqs[p]++
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := newHist()
	b.ReportAllocs()
	for i := range b.N {
		recordDur(h, time.Duration(i%5_000_000)*time.Microsecond/10)
	}
}

func BenchmarkRecorderAcked(b *testing.B) {
	start := time.Now()
	r := newRecorder(start, 100*time.Millisecond)
	b.ReportAllocs()
	for i := range b.N {
		// One simulated second every 100,000 acks.
		now := start.Add(time.Duration(i) * 10 * time.Microsecond)
		r.acked(now.Add(-3*time.Millisecond), now.Add(-2*time.Millisecond), now, 100)
	}
}

func BenchmarkHeaderDecode(b *testing.B) {
	buf := make([]byte, 100)
	header{RunID: 1, Producer: 2, Seq: 3, Intended: 4}.encode(buf)
	b.ReportAllocs()
	for range b.N {
		if _, err := decodeHeader(buf); err != nil {
			b.Fatal(err)
		}
	}
}
