package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/kafkadist"
	"github.com/kafkachaos/kafkachaos/localcluster/agent"
)

// Timeouts of the Kafka end-to-end test.
const (
	kafkaReadyTimeout  = 5 * time.Minute
	kafkaHealthTimeout = 4 * time.Minute
)

// applyManifest creates every object of a multi-document YAML file.
func applyManifest(ctx context.Context, t *testing.T, cs kubernetes.Interface, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Namespace":
			var o corev1.Namespace
			mustDecode(t, doc, &o)
			_, err = cs.CoreV1().Namespaces().Create(ctx, &o, metav1.CreateOptions{})
		case "Service":
			var o corev1.Service
			mustDecode(t, doc, &o)
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "PodDisruptionBudget":
			var o policyv1.PodDisruptionBudget
			mustDecode(t, doc, &o)
			_, err = cs.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "StatefulSet":
			var o appsv1.StatefulSet
			mustDecode(t, doc, &o)
			_, err = cs.AppsV1().StatefulSets(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "":
			continue
		default:
			t.Fatalf("%s: kind %s not handled by the test", path, meta.Kind)
		}
		if err != nil {
			t.Fatalf("create %s: %v", meta.Kind, err)
		}
	}
}

func mustDecode(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatal(err)
	}
}

// kafkaLayout is one of the manifests/kafka variants.
type kafkaLayout struct {
	name      string
	manifest  string
	namespace string
	broker    string // StatefulSet of the brokers; pods are <broker>-N
	pods      int    // pods to wait for
}

var kafkaLayouts = []kafkaLayout{
	{"combined", "kafka.yaml", "kafka", "kafka", 3},
	{"separate controllers", "separate-controllers/kafka.yaml", "kafka-split", "kafka-broker", 6},
}

// TestKafkaOnLocalCluster deploys each manifests/kafka variant on its own
// local cluster, waits for a healthy 3-broker KRaft cluster, force-deletes
// broker 1's pod, and checks it comes back as a new pod with the same PVC
// and PV, registered again with no under-replicated partition.
func TestKafkaOnLocalCluster(t *testing.T) {
	for _, l := range kafkaLayouts {
		t.Run(l.name, func(t *testing.T) { testKafkaLayout(t, l) })
	}
}

func testKafkaLayout(t *testing.T, l kafkaLayout) {
	if testing.Short() {
		t.Skip("-short: needs the built control plane and the Kafka jars")
	}
	dist, err := kafkadist.Find(kafkadist.DefaultVersion)
	probe, _ := New(WithStateDir(t.TempDir()))
	if _, berr := probe.binaries(); (berr != nil || err != nil) && os.Getenv("CI") == "" {
		t.Skipf("control plane or Kafka jars missing (CI would fail here): %v %v", berr, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	c, err := New(WithStateDir(state), WithAgentBinary(buildAgent(t)), WithKafkaLibs(dist.LibsDir), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
		defer cancel()
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(state, "pods", l.namespace+"_*", "kafka.log"))
			for _, l := range logs {
				t.Logf("%s:\n%s", l, tailFile(l, 40))
			}
			t.Logf("node agent log:\n%s", tailFile(c.agent().logFile(), 40))
		}
		if err := c.Down(ctx, false); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), upTimeout+kafkaReadyTimeout+2*kafkaHealthTimeout)
	defer cancel()
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the default service account", func() (string, bool) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return fmt.Sprint(err), err == nil
	})
	start := time.Now()
	applyManifest(ctx, t, cs, filepath.Join("..", "manifests", "kafka", l.manifest))
	waitLong(t, ctx, kafkaReadyTimeout, fmt.Sprintf("%d Ready pods", l.pods), func() (string, bool) {
		pods, err := cs.CoreV1().Pods(l.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error(), false
		}
		ready, seen := 0, ""
		for _, p := range pods.Items {
			seen += fmt.Sprintf("%s:%s/ready=%t ", p.Name, p.Status.Phase, podReady(&p))
			if podReady(&p) {
				ready++
			}
		}
		return seen, ready == l.pods
	})
	t.Logf("%d pods Ready %s after apply", l.pods, time.Since(start).Round(time.Millisecond))

	res := agent.Resolver{Path: filepath.Join(state, agent.HostsPath)}
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.broker+"-0.kafka-headless."+l.namespace+".svc.cluster.local:9092"), kgo.Dialer(res.DialContext))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for name, want := range map[string]string{
		"kafka-headless." + l.namespace + ".svc.cluster.local": "",        // a headless service: any of its pods
		"kubernetes.default.svc.cluster.local":                 serviceIP, // a ClusterIP service
	} {
		waitFor(t, ctx, "name "+name, func() (string, bool) {
			ip, err := res.Lookup(name)
			return fmt.Sprint(ip, err), err == nil && (want == "" || ip == want)
		})
	}
	adm := kadm.NewClient(cl)
	healthy := func(what string) {
		t.Helper()
		waitLong(t, ctx, kafkaHealthTimeout, what, func() (string, bool) {
			h, err := brokers.CheckHealth(ctx, brokers.FromKgo(cl), brokers.WithBrokers(0, 1, 2))
			if err != nil {
				return err.Error(), false
			}
			return h.String(), h.Healthy()
		})
	}
	healthy("a healthy Kafka cluster")
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "kafkachaos-e2e"); err != nil {
		t.Fatal(err)
	}
	healthy("the topic fully replicated")

	victim := l.broker + "-1"
	old, err := cs.CoreV1().Pods(l.namespace).Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(l.namespace).Get(ctx, "data-"+victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(l.namespace).Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}); err != nil {
		t.Fatal(err)
	}
	forced := time.Now()
	waitLong(t, ctx, kafkaReadyTimeout, victim+" back as a new Ready pod", func() (string, bool) {
		p, err := cs.CoreV1().Pods(l.namespace).Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("uid %s ready %t", p.UID, podReady(p)), p.UID != old.UID && podReady(p)
	})
	healthy("broker 1 registered again and every ISR full")
	t.Logf("%s force-deleted; healthy again %s later", victim, time.Since(forced).Round(time.Millisecond))
	pvc2, err := cs.CoreV1().PersistentVolumeClaims(l.namespace).Get(ctx, "data-"+victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc2.UID != pvc.UID || pvc2.Spec.VolumeName != pvc.Spec.VolumeName {
		t.Errorf("%s's claim changed: %s -> %s (was %s -> %s)", victim, pvc2.UID, pvc2.Spec.VolumeName, pvc.UID, pvc.Spec.VolumeName)
	}
}
