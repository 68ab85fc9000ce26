package soak

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Report is what a soak saw of the suite's own process, for report.json.
type Report struct {
	// Every is the sampling interval; Samples the curve.
	Every   time.Duration `json:"every"`
	Samples []Sample      `json:"samples"`
	Memory  Memory        `json:"memory"`
	// GoroutinesBefore is the count before the first story, and
	// BaselineGoroutines the fewest a story's end came back to, from the
	// first on (what lives for the whole run: connection pools, the
	// sampler), which the later stories must come back to;
	// GoroutinesAfter is the count after each story.
	GoroutinesBefore   int   `json:"goroutinesBefore"`
	BaselineGoroutines int   `json:"baselineGoroutines"`
	GoroutinesAfter    []int `json:"goroutinesAfter"`
}

// Memory is the verdict's figures on a run's resident memory, in bytes.
type Memory struct {
	// Start, Peak and End are the first sample, the largest and the last.
	Start uint64 `json:"start"`
	Peak  uint64 `json:"peak"`
	End   uint64 `json:"end"`
	// Reference is the median of the window after the warm-up, Final the
	// median of the run's last window, and Growth Final/Reference - 1.
	Reference uint64  `json:"reference"`
	Final     uint64  `json:"final"`
	Growth    float64 `json:"growth"`
}

func (m Memory) String() string {
	return fmt.Sprintf("RSS start %s, peak %s, end %s; median %s after the warm-up, %s at the end (%+.1f%%)",
		mib(m.Start), mib(m.Peak), mib(m.End), mib(m.Reference), mib(m.Final), 100*m.Growth)
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// JudgeMemory measures samples' memory: the median RSS of the window that
// starts warmup after the first sample against the median of the last
// window, which must not overlap it. It returns the figures, and an error
// when the run was too short to tell, or when memory grew by more than
// maxGrowth (0.10 is 10 %).
func JudgeMemory(samples []Sample, warmup, window time.Duration, maxGrowth float64) (Memory, error) {
	if len(samples) == 0 {
		return Memory{}, fmt.Errorf("soak: no memory samples")
	}
	first, last := samples[0].At, samples[len(samples)-1].At
	m := Memory{Start: samples[0].RSSBytes, End: samples[len(samples)-1].RSSBytes}
	for _, s := range samples {
		m.Peak = max(m.Peak, s.RSSBytes)
	}
	refFrom, refTo := first.Add(warmup), first.Add(warmup+window)
	finalFrom := last.Add(-window)
	if finalFrom.Before(refTo) {
		return m, fmt.Errorf("soak: a run of %s is too short to judge its memory: it needs the %s warm-up and two windows of %s",
			last.Sub(first).Round(time.Second), warmup, window)
	}
	ref, final := median(samples, refFrom, refTo), median(samples, finalFrom, last.Add(time.Nanosecond))
	if ref == 0 || final == 0 {
		return m, fmt.Errorf("soak: a window has no samples (the sampling stalled)")
	}
	m.Reference, m.Final = ref, final
	m.Growth = float64(final)/float64(ref) - 1
	if m.Growth > maxGrowth {
		return m, fmt.Errorf("soak: resident memory grew by %.1f%% after the warm-up (limit %.0f%%): %s", 100*m.Growth, 100*maxGrowth, m)
	}
	return m, nil
}

// median returns the median RSS of the samples in [from, to), 0 if none.
func median(samples []Sample, from, to time.Time) uint64 {
	var in []uint64
	for _, s := range samples {
		if !s.At.Before(from) && s.At.Before(to) {
			in = append(in, s.RSSBytes)
		}
	}
	if len(in) == 0 {
		return 0
	}
	slices.Sort(in)
	return in[len(in)/2]
}

// SettleGoroutines waits, up to timeout, until the process runs at most
// baseline+slack goroutines (connections and timers of a story close
// shortly after it), and returns the last count it saw. On a timeout the
// error names the largest groups of goroutines by where they wait.
func SettleGoroutines(ctx context.Context, baseline, slack int, poll, timeout time.Duration) (int, error) {
	var n int
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(context.Context) (bool, error) {
		n = runtime.NumGoroutine()
		return n <= baseline+slack, nil
	})
	if err != nil {
		return n, fmt.Errorf("soak: %d goroutines %s after the story, against a baseline of %d (slack %d); the largest groups:\n%s",
			n, timeout, baseline, slack, largestGroups(3))
	}
	return n, nil
}

// largestGroups names the n largest groups of the process's goroutines
// that share a stack, with their count and the frames of their stack.
func largestGroups(n int) string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return err.Error()
	}
	// debug=1: a header line, then blocks of a "COUNT @ PCs" line and
	// "#\tPC\tframe\tfile:line" lines, sorted by count, largest first.
	_, groups, _ := strings.Cut(buf.String(), "\n")
	blocks := strings.Split(groups, "\n\n")
	var out strings.Builder
	for _, b := range blocks[:min(n, len(blocks))] {
		lines := strings.Split(strings.TrimSpace(b), "\n")
		count, _, _ := strings.Cut(lines[0], " @ ")
		fmt.Fprintf(&out, "%s goroutines:\n", count)
		for _, l := range lines[1:min(len(lines), 7)] {
			f := strings.Fields(l)
			if len(f) >= 3 {
				fmt.Fprintf(&out, "\t%s\n", f[2])
			}
		}
	}
	return out.String()
}
