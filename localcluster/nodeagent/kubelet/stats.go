package kubelet

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kafkachaos/kafkachaos/internal/procstat"
)

// podSample is one pod's containers as found running, and then what /proc
// said of them.
type podSample struct {
	ref     statsv1alpha1.PodReference
	started metav1.Time
	ctrs    []ctrSample
}

type ctrSample struct {
	name    string
	started metav1.Time
	pid     int // its process group: the container process is its leader
	usage   procstat.Usage
}

// statsSummary is the kubelet's /stats/summary for the node's pods: each
// running container's CPU time and memory, read from /proc.
func (p *provider) statsSummary() (*statsv1alpha1.Summary, error) {
	pods := p.runningContainers()
	pods, err := readUsage(pods, procstat.Group)
	if err != nil {
		return nil, err
	}
	return summary(p.node, metav1.Now(), pods), nil
}

// runningContainers copies the pods' running containers under the locks,
// so that /proc is read without them.
func (p *provider) runningContainers() []podSample {
	p.mu.Lock()
	runs := make([]*podRun, 0, len(p.pods))
	for _, r := range p.pods {
		runs = append(runs, r)
	}
	p.mu.Unlock()
	out := make([]podSample, 0, len(runs))
	for _, r := range runs {
		r.mu.Lock()
		ps := podSample{ref: statsv1alpha1.PodReference{Name: r.pod.Name, Namespace: r.pod.Namespace, UID: string(r.pod.UID)}}
		if st := r.pod.Status.StartTime; st != nil {
			ps.started = *st
		}
		for _, c := range r.ctrs {
			// c.cmd stays set after its process exits, until a restart
			// replaces it: only a running container's pid is its own.
			if c.state.Running == nil || c.pid() == 0 {
				continue
			}
			ps.ctrs = append(ps.ctrs, ctrSample{name: c.spec.Name, started: c.state.Running.StartedAt, pid: c.pid()})
		}
		r.mu.Unlock()
		out = append(out, ps)
	}
	// In a stable order, as p.pods is a map: summaries read and diff
	// better.
	slices.SortFunc(out, func(a, b podSample) int {
		return cmp.Or(cmp.Compare(a.ref.Namespace, b.ref.Namespace), cmp.Compare(a.ref.Name, b.ref.Name))
	})
	return out
}

// readUsage fills in each container's usage with read, leaving out those
// whose process group has gone since (they exited, or are restarting).
func readUsage(pods []podSample, read func(pgid int) (procstat.Usage, error)) ([]podSample, error) {
	for i := range pods {
		var kept []ctrSample
		for _, c := range pods[i].ctrs {
			u, err := read(c.pid)
			if errors.Is(err, procstat.ErrNoProcess) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("agent: stats of %s/%s container %s: %w", pods[i].ref.Namespace, pods[i].ref.Name, c.name, err)
			}
			c.usage = u
			kept = append(kept, c)
		}
		pods[i].ctrs = kept
	}
	return pods, nil
}

// summary builds the kubelet's summary of pods sampled at now: per
// container CPU time and memory, and the pod's as their sums. UsageNanoCores,
// a rate, needs two samples and is left out. The working set is given as
// the RSS: the kubelet's (cgroup memory less inactive file pages) needs a
// cgroup per container, which these processes do not have.
func summary(node string, now metav1.Time, pods []podSample) *statsv1alpha1.Summary {
	s := &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: node}, Pods: []statsv1alpha1.PodStats{}}
	for _, ps := range pods {
		pod := statsv1alpha1.PodStats{PodRef: ps.ref, StartTime: ps.started, Containers: []statsv1alpha1.ContainerStats{}}
		var cpuSum, rssSum uint64
		for _, c := range ps.ctrs {
			cpu, rss := uint64(c.usage.CPU.Nanoseconds()), c.usage.RSSBytes
			cpuSum += cpu
			rssSum += rss
			pod.Containers = append(pod.Containers, statsv1alpha1.ContainerStats{
				Name: c.name, StartTime: c.started,
				CPU:    cpuStats(now, cpu),
				Memory: memoryStats(now, rss),
			})
		}
		// A pod with nothing running has nothing measured, rather than
		// zero use.
		if len(ps.ctrs) > 0 {
			pod.CPU, pod.Memory = cpuStats(now, cpuSum), memoryStats(now, rssSum)
		}
		s.Pods = append(s.Pods, pod)
	}
	return s
}

func cpuStats(now metav1.Time, ns uint64) *statsv1alpha1.CPUStats {
	return &statsv1alpha1.CPUStats{Time: now, UsageCoreNanoSeconds: &ns}
}

func memoryStats(now metav1.Time, rss uint64) *statsv1alpha1.MemoryStats {
	return &statsv1alpha1.MemoryStats{Time: now, WorkingSetBytes: &rss, RSSBytes: ptr(rss)}
}
