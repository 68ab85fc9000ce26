package resources

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

var t0 = time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)

// ctr is a container's look: cumulative CPU seconds and working set.
func ctr(name string, start time.Time, cpuSec float64, mem uint64) statsv1alpha1.ContainerStats {
	ns := uint64(cpuSec * 1e9)
	return statsv1alpha1.ContainerStats{Name: name, StartTime: metav1.NewTime(start),
		CPU: &statsv1alpha1.CPUStats{UsageCoreNanoSeconds: &ns}, Memory: &statsv1alpha1.MemoryStats{WorkingSetBytes: &mem}}
}

func pod(ns, name, uid string, cs ...statsv1alpha1.ContainerStats) statsv1alpha1.PodStats {
	return statsv1alpha1.PodStats{PodRef: statsv1alpha1.PodReference{Namespace: ns, Name: name, UID: uid}, Containers: cs}
}

func TestAccumulator(t *testing.T) {
	from := t0.Add(time.Hour) // the window starts an hour after the brokers did
	later := from.Add(time.Minute)
	tests := []struct {
		name  string
		looks [][]statsv1alpha1.PodStats
		want  map[string]PodUsage
	}{
		{"counted from the first look", [][]statsv1alpha1.PodStats{
			{pod("k", "kafka-0", "u0", ctr("kafka", t0, 100, 300))},
			{pod("k", "kafka-0", "u0", ctr("kafka", t0, 103, 400))},
			{pod("k", "kafka-0", "u0", ctr("kafka", t0, 104.5, 350))},
		}, map[string]PodUsage{"kafka-0": {Pod: "kafka-0", CPUSeconds: 4.5, PeakMemoryBytes: 400, Samples: 3}}},
		{"a recreated pod counts from zero", [][]statsv1alpha1.PodStats{
			{pod("k", "kafka-1", "u1", ctr("kafka", t0, 50, 300))},
			{pod("k", "kafka-1", "u1", ctr("kafka", t0, 52, 300))},
			{pod("k", "kafka-1", "u2", ctr("kafka", later, 7, 200))},
		}, map[string]PodUsage{"kafka-1": {Pod: "kafka-1", CPUSeconds: 9, PeakMemoryBytes: 300, Samples: 3}}},
		{"missed by the first look, running before the window: counted from its first look", [][]statsv1alpha1.PodStats{
			{},
			{pod("k", "kafka-3", "u4", ctr("kafka", t0, 3600, 300))},
			{pod("k", "kafka-3", "u4", ctr("kafka", t0, 3602, 300))},
		}, map[string]PodUsage{"kafka-3": {Pod: "kafka-3", CPUSeconds: 2, PeakMemoryBytes: 300, Samples: 2}}},
		{"started in the window, first seen late: counted from zero", [][]statsv1alpha1.PodStats{
			{},
			{},
			{pod("k", "kafka-4", "u5", ctr("kafka", later, 6, 100))},
		}, map[string]PodUsage{"kafka-4": {Pod: "kafka-4", CPUSeconds: 6, PeakMemoryBytes: 100, Samples: 1}}},
		{"a falling figure is a new starting point, not a new process", [][]statsv1alpha1.PodStats{
			{pod("k", "kafka-2", "u3", ctr("kafka", t0, 50, 10))},
			{pod("k", "kafka-2", "u3", ctr("kafka", t0, 48, 10))},
			{pod("k", "kafka-2", "u3", ctr("kafka", t0, 49, 10))},
		}, map[string]PodUsage{"kafka-2": {Pod: "kafka-2", CPUSeconds: 1, PeakMemoryBytes: 10, Samples: 3}}},
		{"containers of a pod add up", [][]statsv1alpha1.PodStats{
			{pod("k", "zookeeper-0", "z", ctr("zk", t0, 1, 100), ctr("side", t0, 1, 50))},
			{pod("k", "zookeeper-0", "z", ctr("zk", t0, 2, 120), ctr("side", t0, 1.5, 60))},
		}, map[string]PodUsage{"zookeeper-0": {Pod: "zookeeper-0", CPUSeconds: 1.5, PeakMemoryBytes: 180, Samples: 2}}},
		{"no CPU figures: memory only", [][]statsv1alpha1.PodStats{
			{{PodRef: statsv1alpha1.PodReference{Name: "p", UID: "x"}, Containers: []statsv1alpha1.ContainerStats{{Name: "c"}}}},
		}, map[string]PodUsage{"p": {Pod: "p", Samples: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAccumulator(from)
			for _, l := range tt.looks {
				a.add(l)
			}
			got := a.usage()
			if len(got) != len(tt.want) {
				t.Fatalf("usage %+v, want %+v", got, tt.want)
			}
			for _, g := range got {
				w := tt.want[g.Pod]
				if math.Abs(g.CPUSeconds-w.CPUSeconds) > 1e-6 || g.PeakMemoryBytes != w.PeakMemoryBytes || g.Samples != w.Samples {
					t.Errorf("%+v, want %+v", g, w)
				}
			}
		})
	}
}

func TestUsageTotals(t *testing.T) {
	u := Usage{From: t0, To: t0.Add(10 * time.Second), Pods: []PodUsage{
		{Pod: "kafka-0", CPUSeconds: 5, PeakMemoryBytes: 100},
		{Pod: "kafka-1", CPUSeconds: 3, PeakMemoryBytes: 200},
		{Pod: "zookeeper-0", CPUSeconds: 2, PeakMemoryBytes: 50},
	}}
	if c := u.CPUCores(); math.Abs(c-1) > 1e-9 {
		t.Errorf("CPUCores %v, want 1", c)
	}
	k := u.Of("kafka-")
	if c, m := k.CPUCores(), k.PeakMemoryBytes(); math.Abs(c-0.8) > 1e-9 || m != 300 {
		t.Errorf("kafka- pods: %v cores, %d bytes; want 0.8 and 300", c, m)
	}
	if len(u.Pods) != 3 {
		t.Errorf("Of changed its receiver: %d pods", len(u.Pods))
	}
	if c := (Usage{From: t0, To: t0}).CPUCores(); c != 0 {
		t.Errorf("an empty window: %v cores", c)
	}
}

// TestSampler: the nodes asked are those of the namespace's pods, other
// namespaces' pods are left out, and a failing node is the usage's
// problem while the others count.
func TestSampler(t *testing.T) {
	cs := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafka-0"}, Spec: corev1.PodSpec{NodeName: "node-a"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafka-1"}, Spec: corev1.PodSpec{NodeName: "node-b"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "x"}, Spec: corev1.PodSpec{NodeName: "node-c"}},
	)
	cpu := 10.0
	asked := map[string]int{}
	summary := func(_ context.Context, node string) (*statsv1alpha1.Summary, error) {
		asked[node]++
		if node == "node-b" {
			return nil, errors.New("forbidden: nodes/proxy")
		}
		cpu += 2
		return &statsv1alpha1.Summary{Pods: []statsv1alpha1.PodStats{
			pod("kafka", "kafka-0", "u", ctr("kafka", t0, cpu, 64)),
			pod("other", "y", "v", ctr("c", t0, 1000, 1<<30)),
		}}, nil
	}
	s := Start(context.Background(), Config{Client: cs, Namespace: "kafka", Every: time.Hour, Summary: summary})
	s.look(context.Background(), Config{Client: cs, Namespace: "kafka"}, summary) // a second look, not waiting an hour
	u := s.Stop()
	if asked["node-a"] != 2 || asked["node-b"] != 2 || asked["node-c"] != 0 {
		t.Errorf("nodes asked %v, want node-a and node-b twice", asked)
	}
	if len(u.Pods) != 1 || u.Pods[0].Pod != "kafka-0" || math.Abs(u.Pods[0].CPUSeconds-2) > 1e-6 || u.Pods[0].PeakMemoryBytes != 64 {
		t.Errorf("pods %+v, want kafka-0 with 2 s and 64 B", u.Pods)
	}
	if u.Problem != "forbidden: nodes/proxy" {
		t.Errorf("problem %q", u.Problem)
	}
	if again := s.Stop(); !again.To.Equal(u.To) {
		t.Errorf("a second Stop moved the window's end")
	}
}

func TestUsageString(t *testing.T) {
	u := Usage{From: t0, To: t0.Add(10 * time.Second), Pods: []PodUsage{{Pod: "kafka-0", CPUSeconds: 5, PeakMemoryBytes: 300 << 20}}, Problem: "node b: forbidden"}
	for _, tt := range []struct {
		u    Usage
		want string
	}{
		{u, "0.50 cores mean, 300 MiB peak (the sum of the pods' peaks) over 10s: kafka-0 5.0 s CPU 300 MiB (partial: node b: forbidden)"},
		{Usage{Problem: "forbidden"}, "not measured: forbidden"},
		{Usage{}, "not measured: no pod seen"},
	} {
		if got := tt.u.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestSamplerStopDuringALook: a look that Stop cuts short is not the
// cluster's failure, and the window ends at the last look that counted.
func TestSamplerStopDuringALook(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafka-0"}, Spec: corev1.PodSpec{NodeName: "node-a"}})
	blocked := make(chan struct{})
	calls := 0
	summary := func(ctx context.Context, _ string) (*statsv1alpha1.Summary, error) {
		calls++
		if calls > 1 {
			close(blocked)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &statsv1alpha1.Summary{Pods: []statsv1alpha1.PodStats{pod("kafka", "kafka-0", "u", ctr("kafka", t0, 1, 64))}}, nil
	}
	s := Start(context.Background(), Config{Client: cs, Namespace: "kafka", Every: 10 * time.Millisecond, Summary: summary})
	<-blocked
	u := s.Stop()
	if u.Problem != "" {
		t.Errorf("problem %q: Stop's cancel counted as a failure", u.Problem)
	}
	if u.To.Before(u.From) {
		t.Errorf("window %s to %s", u.From, u.To)
	}
	if len(u.Pods) != 1 {
		t.Errorf("pods %+v, want kafka-0 from the first look", u.Pods)
	}
}
