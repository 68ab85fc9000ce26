package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kafkachaos/kafkachaos/internal/procstat"
)

func TestSummary(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	started := metav1.NewTime(time.Unix(900, 0))
	ref := func(name string) statsv1alpha1.PodReference {
		return statsv1alpha1.PodReference{Name: name, Namespace: "kafka", UID: "uid-" + name}
	}
	ctr := func(name string, pid int) ctrSample { return ctrSample{name: name, started: started, pid: pid} }
	// read is /proc as the test has it: pid 1 and 2 run, 3 has exited,
	// 4 cannot be read.
	read := func(pgid int) (procstat.Usage, error) {
		switch pgid {
		case 1:
			return procstat.Usage{CPU: 2 * time.Second, RSSBytes: 100, Processes: 1}, nil
		case 2:
			return procstat.Usage{CPU: 500 * time.Millisecond, RSSBytes: 20, Processes: 3}, nil
		case 3:
			return procstat.Usage{}, procstat.ErrNoProcess
		}
		return procstat.Usage{}, errors.New("permission denied")
	}
	u64 := func(v uint64) *uint64 { return &v }
	cpu := func(ns uint64) *statsv1alpha1.CPUStats {
		return &statsv1alpha1.CPUStats{Time: now, UsageCoreNanoSeconds: u64(ns)}
	}
	mem := func(b uint64) *statsv1alpha1.MemoryStats {
		return &statsv1alpha1.MemoryStats{Time: now, WorkingSetBytes: u64(b), RSSBytes: u64(b)}
	}
	for _, tt := range []struct {
		name    string
		pods    []podSample
		want    []statsv1alpha1.PodStats
		wantErr bool
	}{{
		name: "no pods",
		want: []statsv1alpha1.PodStats{},
	}, {
		name: "a pod's use is its containers' sum",
		pods: []podSample{{ref: ref("kafka-0"), started: started, ctrs: []ctrSample{ctr("kafka", 1), ctr("sidecar", 2)}}},
		want: []statsv1alpha1.PodStats{{
			PodRef: ref("kafka-0"), StartTime: started,
			Containers: []statsv1alpha1.ContainerStats{
				{Name: "kafka", StartTime: started, CPU: cpu(2e9), Memory: mem(100)},
				{Name: "sidecar", StartTime: started, CPU: cpu(5e8), Memory: mem(20)},
			},
			CPU: cpu(2.5e9), Memory: mem(120),
		}},
	}, {
		name: "an exited container is left out",
		pods: []podSample{
			{ref: ref("kafka-0"), started: started, ctrs: []ctrSample{ctr("gone", 3), ctr("kafka", 1)}},
			{ref: ref("kafka-1"), started: started, ctrs: []ctrSample{ctr("gone", 3)}},
		},
		want: []statsv1alpha1.PodStats{{
			PodRef: ref("kafka-0"), StartTime: started,
			Containers: []statsv1alpha1.ContainerStats{{Name: "kafka", StartTime: started, CPU: cpu(2e9), Memory: mem(100)}},
			CPU:        cpu(2e9), Memory: mem(100),
		}, {
			// Nothing runs: nothing measured, not zero use.
			PodRef: ref("kafka-1"), StartTime: started, Containers: []statsv1alpha1.ContainerStats{},
		}},
	}, {
		name:    "an unreadable container fails the summary",
		pods:    []podSample{{ref: ref("kafka-0"), ctrs: []ctrSample{ctr("kafka", 4)}}},
		wantErr: true,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := readUsage(tt.pods, read)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readUsage error = %v, want error %t", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			got := summary("node-1", now, pods)
			if got.Node.NodeName != "node-1" {
				t.Errorf("node name %q, want node-1", got.Node.NodeName)
			}
			if !reflect.DeepEqual(got.Pods, tt.want) {
				t.Errorf("pods\n got %+v\nwant %+v", got.Pods, tt.want)
			}
		})
	}
}

// TestStatsSummaryOfProcess reads a real process group through a provider
// holding one pod, without the rest of the agent.
func TestStatsSummaryOfProcess(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	startedAt := metav1.Now()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kafka-0", Namespace: "kafka", UID: "u1"}}
	pod.Status.StartTime = &startedAt
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: startedAt}}
	p := &provider{node: "node-1", pods: map[string]*podRun{"kafka/kafka-0": {pod: pod, ctrs: []*ctrRun{
		{spec: corev1.Container{Name: "kafka"}, cmd: cmd, state: running},
		// Waiting to restart: its last process's pid is not its own.
		{spec: corev1.Container{Name: "restarting"}, cmd: &exec.Cmd{Process: &os.Process{Pid: cmd.Process.Pid}},
			state: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
		// Running, its process gone (a pid no process can have).
		{spec: corev1.Container{Name: "gone"}, cmd: &exec.Cmd{Process: &os.Process{Pid: 1 << 22}}, state: running},
	}}}}
	// A process just past exec can show no RSS yet: the kernel folds a
	// task's page counts into its mm's only now and then.
	var s *statsv1alpha1.Summary
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		var err error
		if s, err = p.statsSummary(); err != nil {
			return false, err
		}
		if len(s.Pods) != 1 || len(s.Pods[0].Containers) != 1 {
			return false, fmt.Errorf("summary %+v, want one pod with one container", s)
		}
		m := s.Pods[0].Containers[0].Memory
		return m != nil && *m.RSSBytes > 0, nil
	})
	if err != nil {
		t.Fatalf("stats of a running process: %v (last %+v)", err, s)
	}
	ps, cs := s.Pods[0], s.Pods[0].Containers[0]
	if ps.PodRef != (statsv1alpha1.PodReference{Name: "kafka-0", Namespace: "kafka", UID: "u1"}) || !ps.StartTime.Equal(&startedAt) {
		t.Errorf("pod %+v %v, want kafka/kafka-0 u1 started %v", ps.PodRef, ps.StartTime, startedAt)
	}
	if cs.Name != "kafka" || cs.CPU == nil || cs.Memory == nil || *cs.Memory.RSSBytes == 0 || *cs.Memory.WorkingSetBytes == 0 {
		t.Errorf("container %+v, want kafka with CPU and some memory", cs)
	}
	if cs.CPU != nil && cs.CPU.UsageNanoCores != nil {
		t.Errorf("UsageNanoCores %d, want none from one sample", *cs.CPU.UsageNanoCores)
	}
	if ps.Memory == nil || *ps.Memory.RSSBytes != *cs.Memory.RSSBytes {
		t.Errorf("pod memory %+v, want its one container's", ps.Memory)
	}
}
