package resources

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// PodUsage is what one pod used in a Sampler's window.
type PodUsage struct {
	Pod string `json:"pod"`
	// CPUSeconds is the CPU time (core-seconds) its containers used in
	// the window, new containers (a restarted or recreated pod's)
	// counted from their start.
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakMemoryBytes is the largest working set the samples saw; a peak
	// between two samples is missed.
	PeakMemoryBytes uint64 `json:"peakMemoryBytes"`
	Samples         int    `json:"samples"`
}

// Usage is what a namespace's pods used between From and To.
type Usage struct {
	From time.Time  `json:"from"`
	To   time.Time  `json:"to"`
	Pods []PodUsage `json:"pods,omitempty"`
	// Problem says why the usage is missing or partial (the identity
	// may not get nodes/proxy, a kubelet serves no CPU figures).
	Problem string `json:"problem,omitempty"`
}

// CPUCores is the pods' mean CPU use over the window, in cores.
func (u Usage) CPUCores() float64 {
	w := u.To.Sub(u.From).Seconds()
	if w <= 0 {
		return 0
	}
	var s float64
	for _, p := range u.Pods {
		s += p.CPUSeconds
	}
	return s / w
}

// PeakMemoryBytes is the sum of the pods' peaks: an upper bound of the
// namespace's peak, as the pods need not peak at once.
func (u Usage) PeakMemoryBytes() uint64 {
	var s uint64
	for _, p := range u.Pods {
		s += p.PeakMemoryBytes
	}
	return s
}

// Of returns the usage of the pods whose names start with one of prefixes
// (a StatefulSet's pods: "kafka-", "zookeeper-").
func (u Usage) Of(prefixes ...string) Usage {
	out := u
	out.Pods = slices.DeleteFunc(slices.Clone(u.Pods), func(p PodUsage) bool {
		return !slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(p.Pod, pre) })
	})
	return out
}

// ctrKey names one container instance: a recreated pod has a new UID, a
// restarted container a new start time.
type ctrKey struct {
	uid, container string
	start          time.Time
}

// accumulator turns cumulative per-container figures into a window's use.
type accumulator struct {
	from time.Time // the window's start
	last map[ctrKey]uint64
	pods map[string]*PodUsage
}

func newAccumulator(from time.Time) *accumulator {
	return &accumulator{from: from, last: map[ctrKey]uint64{}, pods: map[string]*PodUsage{}}
}

// add takes one look at the namespace's pods. A container seen for the
// first time is counted from zero if it started in the window (start times
// have a second's resolution), else from this look: a look that missed it
// must not charge the window with its whole life. A figure that went down
// (a process group whose exited children's time left it) is a new
// starting point, not a new process.
func (a *accumulator) add(pods []statsv1alpha1.PodStats) {
	from := a.from.Truncate(time.Second)
	for _, ps := range pods {
		pu := a.pods[ps.PodRef.Name]
		if pu == nil {
			pu = &PodUsage{Pod: ps.PodRef.Name}
			a.pods[ps.PodRef.Name] = pu
		}
		pu.Samples++
		var mem uint64
		for _, c := range ps.Containers {
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				mem += *c.Memory.WorkingSetBytes
			}
			if c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil {
				continue
			}
			k := ctrKey{uid: ps.PodRef.UID, container: c.Name, start: c.StartTime.Time}
			cur := *c.CPU.UsageCoreNanoSeconds
			prev, seen := a.last[k]
			switch {
			case !seen && !c.StartTime.IsZero() && !c.StartTime.Time.Before(from):
				pu.CPUSeconds += float64(cur) / 1e9
			case seen && cur > prev:
				pu.CPUSeconds += float64(cur-prev) / 1e9
			}
			a.last[k] = cur
		}
		pu.PeakMemoryBytes = max(pu.PeakMemoryBytes, mem)
	}
}

// usage returns the pods' use, by pod name.
func (a *accumulator) usage() []PodUsage {
	out := make([]PodUsage, 0, len(a.pods))
	for _, p := range a.pods {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y PodUsage) int { return strings.Compare(x.Pod, y.Pod) })
	return out
}

// String is the usage in one line: the totals, then each pod's.
func (u Usage) String() string {
	if len(u.Pods) == 0 {
		return "not measured: " + cmp.Or(u.Problem, "no pod seen")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%.2f cores mean, %d MiB peak (the sum of the pods' peaks) over %s:", u.CPUCores(), u.PeakMemoryBytes()>>20, u.To.Sub(u.From).Round(time.Second))
	for i, p := range u.Pods {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %.1f s CPU %d MiB", p.Pod, p.CPUSeconds, p.PeakMemoryBytes>>20)
	}
	if u.Problem != "" {
		fmt.Fprintf(&b, " (partial: %s)", u.Problem)
	}
	return b.String()
}
