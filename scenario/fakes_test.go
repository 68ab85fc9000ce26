package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

const (
	testNS      = "kafka"
	testCluster = "kafkachaos-test-cluster"
)

// testEnv is an Env against a fake Kubernetes API with three broker pods
// (kafka-0 to kafka-2, node IDs 0 to 2) and a kfake Kafka of three brokers
// with the same IDs, in ZooKeeper mode as far as health goes (kfake
// answers no DescribeQuorum), with phases of a few milliseconds.
func testEnv(t *testing.T) (*Env, *fakeCaller) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ClusterID(testCluster))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	objs := []runtime.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS, Labels: map[string]string{chaos.AllowLabel: "true"}}}}
	for i := range 3 {
		objs = append(objs, brokerPod(i))
	}
	caller := &fakeCaller{spec: "the fake spec"}
	short := metav1.Duration{Duration: 10 * time.Millisecond}
	env := &Env{
		Kube: fake.NewClientset(objs...), Namespace: testNS, Flavor: "statefulset",
		Bootstrap: c.ListenAddrs(), KafkaOpts: []kgo.Opt{kgo.RequestRetries(1)},
		RunID: "test-run", ZooKeeperConnect: "zookeeper:2181", LocalKubelets: true,
		Exec: func(_ context.Context, _, pod, _ string, argv []string) (string, error) {
			return "node.id=0\ndirectory.id=dir-of-" + pod + "\n", nil
		},
		Timing:   TimingConfig{Warmup: short, Baseline: short, Hold: short, After: short},
		Bounds:   BoundsConfig{MinThroughputRatioAfter: 0.9, GracefulP99AckRatio: 20, GracefulP99AckFloor: metav1.Duration{Duration: 5 * time.Second}},
		Narrator: caller, Cleanups: caller, Recorder: caller,
	}
	return env, caller
}

// brokerPod is pod i of a broker StatefulSet like manifests/kafka's, Ready
// on node-i.
func brokerPod(i int) *corev1.Pod {
	name := fmt.Sprintf("kafka-%d", i)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": "kafka", "apps.kubernetes.io/pod-index": fmt.Sprint(i)}},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i), Containers: []corev1.Container{{
			Name: "kafka", Image: "apache/kafka:4.4.0",
			Env: []corev1.EnvVar{{Name: "KAFKA_NODE_ID", Value: fmt.Sprint(i)}, {Name: "KAFKA_PROCESS_ROLES", Value: "broker"},
				{Name: "KAFKA_LOG_DIRS", Value: "/var/lib/kafka/data"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kafka/data"}},
		}}, Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", i+1),
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// fakeCaller is the story's caller: its narrator, cleanups and recorder.
type fakeCaller struct {
	mu       sync.Mutex
	spec     string
	steps    []string
	log      strings.Builder
	cleanups []cleanup
	recorded []Outcome
}

type cleanup struct {
	fn      func(context.Context) error
	timeout time.Duration
}

func (c *fakeCaller) By(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, text)
}

func (c *fakeCaller) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.Write(p)
}

func (c *fakeCaller) Defer(fn func(context.Context) error, timeout time.Duration) {
	c.cleanups = append(c.cleanups, cleanup{fn, timeout})
}

func (c *fakeCaller) Spec() string { return c.spec }

func (c *fakeCaller) Record(o Outcome) { c.recorded = append(c.recorded, o) }

// runCleanups runs the cleanups as Ginkgo does: the last registered first,
// each with a context of its own; it returns their errors.
func (c *fakeCaller) runCleanups(t *testing.T) []error {
	t.Helper()
	var errs []error
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		if err := c.cleanups[i].fn(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	c.cleanups = nil
	return errs
}

// said reports whether a narrated step contains s.
func (c *fakeCaller) said(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.steps {
		if strings.Contains(st, s) {
			return true
		}
	}
	return strings.Contains(c.log.String(), s)
}

// fakeFault records what was done to it.
type fakeFault struct {
	injectErr           error
	injected, recovered int
}

func (f *fakeFault) Name() string { return "fake fault" }
func (f *fakeFault) Plan() string { return "inject the fake fault" }

func (f *fakeFault) Inject(context.Context) error {
	f.injected++
	return f.injectErr
}

func (f *fakeFault) Recover(context.Context) error {
	f.recovered++
	return nil
}

// fakeWorkload is a workload that sends nothing: it says what it was told
// and returns the checks it is given.
type fakeWorkload struct {
	checks     []report.Check
	rep        *steadystate.Report // with it, a Measured workload
	marks      []steadystate.Phase
	warmed     bool
	hypothesis *steadystate.Hypothesis
}

func (w *fakeWorkload) Mark(p steadystate.Phase) { w.marks = append(w.marks, p) }

func (w *fakeWorkload) WarmUp(context.Context, time.Duration) error {
	w.warmed = true
	return nil
}

func (w *fakeWorkload) Finish(_ context.Context, h steadystate.Hypothesis) error {
	w.hypothesis = &h
	return nil
}

func (w *fakeWorkload) Checks() []report.Check { return w.checks }

// measuredWorkload is a fakeWorkload with a steady-state report.
type measuredWorkload struct{ *fakeWorkload }

func (w measuredWorkload) Report() *steadystate.Report { return w.rep }

// start starts w as a story's workload.
func start(w Workload) StartWorkload {
	return func(context.Context, *Env, string) (Workload, error) { return w, nil }
}
