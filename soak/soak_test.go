package soak

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// series returns one sample a minute for n minutes, its RSS from rss(minute).
func series(n int, rss func(int) uint64) []Sample {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	var s []Sample
	for i := range n {
		s = append(s, Sample{At: t0.Add(time.Duration(i) * time.Minute), RSSBytes: rss(i)})
	}
	return s
}

func TestJudgeMemory(t *testing.T) {
	const mb = 1 << 20
	flat := func(int) uint64 { return 100 * mb }
	for _, tc := range []struct {
		name       string
		samples    []Sample
		wantGrowth float64
		wantErr    string
	}{
		{"flat", series(60, flat), 0, ""},
		// A warm-up that fills caches is not judged.
		{"warm-up growth", series(60, func(i int) uint64 { return uint64(50+min(i, 10)*5) * mb }), 0, ""},
		// The garbage collector's sawtooth: every other sample 30 % up.
		{"sawtooth", series(60, func(i int) uint64 { return uint64(100+30*(i%2)) * mb }), 0, ""},
		// A leak of 1 MB a minute: medians of 100 MB (minutes 10-19) and 139 MB (49-59).
		{"leak", series(60, func(i int) uint64 { return uint64(85+i) * mb }), 0.39, "grew by 39.0%"},
		{"too short", series(25, flat), 0, "too short"},
		{"none", nil, 0, "no memory samples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := JudgeMemory(tc.samples, 10*time.Minute, 10*time.Minute, 0.10)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("JudgeMemory: %v, %v; want an error with %q", m, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("JudgeMemory: %v", err)
			}
			if d := m.Growth - tc.wantGrowth; d > 0.001 || d < -0.001 {
				t.Fatalf("growth %.3f, want %.3f (%s)", m.Growth, tc.wantGrowth, m)
			}
		})
	}
}

func TestJudgeMemoryFigures(t *testing.T) {
	m, err := JudgeMemory(series(40, func(i int) uint64 { return uint64(10+i%7) << 20 }), 10*time.Minute, 10*time.Minute, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if m.Start != 10<<20 || m.Peak != 16<<20 || m.End != uint64(10+39%7)<<20 {
		t.Fatalf("start/peak/end %d/%d/%d", m.Start, m.Peak, m.End)
	}
}

func TestSettleGoroutines(t *testing.T) {
	ctx := context.Background()
	base := 0
	stop := make(chan struct{})
	for range 20 {
		go func() { <-stop }()
	}
	// 20 goroutines more than base=0 plus whatever runs: they do not settle.
	n, err := SettleGoroutines(ctx, base, 0, 10*time.Millisecond, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "20 goroutines:") || !strings.Contains(err.Error(), "TestSettleGoroutines") {
		t.Fatalf("SettleGoroutines: %d, %v; want an error naming the group of 20 and its stack", n, err)
	}
	close(stop)
	base = n - 20
	if n, err = SettleGoroutines(ctx, base, 0, 10*time.Millisecond, 5*time.Second); err != nil {
		t.Fatalf("after the goroutines ended: %d, %v", n, err)
	}
}

func TestSampler(t *testing.T) {
	s := Start(context.Background(), 5*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Samples()) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got, err := s.Stop()
	if err != nil || len(got) < 3 {
		t.Fatalf("Stop: %d samples, %v", len(got), err)
	}
	for _, x := range got {
		if x.RSSBytes == 0 || x.Goroutines == 0 {
			t.Fatalf("empty sample %+v", x)
		}
	}
	if again, _ := s.Stop(); len(again) != len(got) {
		t.Fatalf("a second Stop: %d samples, want %d", len(again), len(got))
	}
}

func TestWriteHeapProfile(t *testing.T) {
	path := t.TempDir() + "/heap.pprof"
	if err := WriteHeapProfile(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b { // gzipped protobuf
		t.Fatalf("heap profile: %d bytes, %v; want a gzipped profile", len(raw), err)
	}
	if err := WriteHeapProfile(t.TempDir() + "/no/such/dir/heap.pprof"); err == nil {
		t.Fatal("a profile into a missing directory: no error")
	}
}
