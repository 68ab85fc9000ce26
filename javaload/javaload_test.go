package javaload

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

func goodSpec() Spec {
	return Spec{Namespace: "kafka", Name: "kafkachaos-java", Image: "apache/kafka:4.4.0", Bootstrap: []string{"a:9092", "b:9092"},
		Topic: "t-java", Group: "g", Protocol: "consumer", Members: 3, Rate: 100, Deadline: time.Hour}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Spec)
		wantErr string
	}{
		{name: "good", edit: func(*Spec) {}},
		{name: "no image", edit: func(s *Spec) { s.Image = "" }, wantErr: "image is empty"},
		{name: "no bootstrap", edit: func(s *Spec) { s.Bootstrap = nil }, wantErr: "no bootstrap"},
		{name: "a protocol of no client", edit: func(s *Spec) { s.Protocol = "range" }, wantErr: `group protocol "range"`},
		{name: "a share group", edit: func(s *Spec) { s.Protocol = Share }},
		{name: "no members", edit: func(s *Spec) { s.Members = 0 }, wantErr: "members 0"},
		{name: "no deadline", edit: func(s *Spec) { s.Deadline = 0 }, wantErr: "deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goodSpec()
			tt.edit(&s)
			err := s.Validate()
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The pods run the image's scripts with what the verifier needs: each
// record reported, each producer incarnation's values apart, the
// producer's settings as applications run it; never restarted in place,
// and ended by their deadline.
func TestPods(t *testing.T) {
	s := goodSpec()
	prod, cons := s.ProducerPod(2), s.ConsumerPod(1, 0)
	for _, p := range []*corev1.Pod{prod, cons} {
		if p.Spec.RestartPolicy != corev1.RestartPolicyNever || p.Spec.ActiveDeadlineSeconds == nil || *p.Spec.ActiveDeadlineSeconds != 3600 {
			t.Errorf("pod %s: restart %s, deadline %v; want Never and 3600 s", p.Name, p.Spec.RestartPolicy, p.Spec.ActiveDeadlineSeconds)
		}
		if sp := p.Spec.ShareProcessNamespace; sp == nil || !*sp {
			t.Errorf("pod %s does not share its process namespace: its JVM would be PID 1, which a pause cannot stop", p.Name)
		}
		if p.Labels[LabelRun] != s.Name {
			t.Errorf("pod %s is not labelled with its run: %v", p.Name, p.Labels)
		}
	}
	pc, cc := prod.Spec.Containers[0], cons.Spec.Containers[0]
	if pc.Command[0] != producerScript || cc.Command[0] != consumerScript {
		t.Errorf("commands %q and %q", pc.Command, cc.Command)
	}
	for _, want := range [][]string{{"--value-prefix", "2"}, {"--producer.config", producerConfig}, {"--max-messages", "360000"}, {"--bootstrap-server", "a:9092,b:9092"}, {"--repeating-keys", "1000"}} {
		if i := slices.Index(pc.Args, want[0]); i < 0 || pc.Args[i+1] != want[1] {
			t.Errorf("producer args %q lack %q", pc.Args, want)
		}
	}
	if !slices.Contains(cc.Args, "--verbose") || cc.Args[slices.Index(cc.Args, "--group-protocol")+1] != "consumer" {
		t.Errorf("consumer args %q: want --verbose and --group-protocol consumer", cc.Args)
	}
	if prod.Name != s.ProducerName(2) || !strings.HasSuffix(cons.Name, "-consumer-1-0") {
		t.Errorf("names %s and %s", prod.Name, cons.Name)
	}
	if m := pc.VolumeMounts; len(m) != 1 || m[0].MountPath != configDir || prod.Spec.Volumes[0].ConfigMap.Name != s.ConfigMap().Name {
		t.Errorf("the producer's settings are not mounted: %+v %+v", m, prod.Spec.Volumes)
	}
	if got := s.ConfigMap().Data["producer.properties"]; !strings.Contains(got, "enable.idempotence=true") || !strings.Contains(got, "acks=all") {
		t.Errorf("producer settings %q", got)
	}
	s.Protocol = Share
	sc := s.ConsumerPod(0, 1).Spec.Containers[0]
	if sc.Command[0] != shareScript || !slices.Contains(sc.Args, "--verbose") || slices.Contains(sc.Args, "--group-protocol") ||
		sc.Args[slices.Index(sc.Args, "--offset-reset-strategy")+1] != "earliest" {
		t.Errorf("share consumer %q %q: want its script, --verbose, earliest, and no --group-protocol", sc.Command, sc.Args)
	}
}

// Delete removes the run's pods and settings, and only the run's.
func TestDelete(t *testing.T) {
	s := goodSpec()
	other := s
	other.Name = "another"
	cs := fake.NewClientset(s.ProducerPod(1), s.ConsumerPod(0, 0), s.ConfigMap(), other.ConsumerPod(0, 0), other.ConfigMap())
	ctx := t.Context()
	if err := Delete(ctx, cs, s.Namespace, s.Name); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, cs, s.Namespace, s.Name); err != nil {
		t.Fatalf("a second Delete: %v", err)
	}
	if err := Kill(ctx, cs, s.Namespace, s.ProducerName(1)); err != nil {
		t.Fatalf("killing a pod already gone: %v", err)
	}
	left, err := Left(ctx, cs, s.Namespace, s.Name)
	if err != nil || len(left) != 0 {
		t.Errorf("left %v, %v", left, err)
	}
	if left, _ := Left(ctx, cs, s.Namespace, other.Name); len(left) != 1 {
		t.Errorf("another run's pods: %v, want its one", left)
	}
	if _, err := cs.CoreV1().ConfigMaps(s.Namespace).Get(ctx, other.ConfigMap().Name, metav1.GetOptions{}); err != nil {
		t.Errorf("another run's ConfigMap: %v", err)
	}
}

// Follow waits for the pod to start, and a pod that never appears is an
// error that says so.
func TestFollowMissingPod(t *testing.T) {
	cs := fake.NewClientset()
	err := Follow(t.Context(), cs, "kafka", "nope", nil, func(javaclients.Event) {})
	if err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Errorf("Follow of a missing pod = %v", err)
	}
}

// A tool whose log ended and whose container has ended is followed whole.
func TestFollowEnded(t *testing.T) {
	s := goodSpec()
	p := s.ConsumerPod(0, 0)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "consumer", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143}},
	}}}
	cs := fake.NewClientset(p)
	var raw strings.Builder
	if err := Follow(t.Context(), cs, p.Namespace, p.Name, &raw, func(javaclients.Event) {}); err != nil {
		t.Errorf("Follow = %v", err)
	}
	if raw.String() != "fake logs" { // what the fake clientset serves as any pod's log
		t.Errorf("raw copy %q, want the log as served", raw.String())
	}
}

// A log that ended well before its tool did is an error; one that ended
// with it, or a pod gone, is not.
func TestEndedWithTool(t *testing.T) {
	streamEnd := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	ended := func(at time.Time) *corev1.Pod {
		p := goodSpec().ConsumerPod(0, 0)
		p.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "consumer", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(at)}},
		}}}
		return p
	}
	tests := []struct {
		name    string
		pods    []runtime.Object
		wantErr string
	}{
		{name: "ended with its log", pods: []runtime.Object{ended(streamEnd.Add(time.Second))}},
		{name: "gone", pods: nil},
		{name: "ended 20 s after its log", pods: []runtime.Object{ended(streamEnd.Add(20 * time.Second))}, wantErr: "was not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.pods...)
			err := endedWithTool(t.Context(), cs, "kafka", goodSpec().ConsumerName(0, 0), streamEnd)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("endedWithTool = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
