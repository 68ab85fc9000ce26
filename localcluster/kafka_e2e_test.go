package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// Timeouts of the Kafka end-to-end test.
const (
	kafkaReadyTimeout  = 5 * time.Minute
	kafkaHealthTimeout = 4 * time.Minute
)

// TestKafkaOnLocalCluster deploys each manifests/kafka variant (at its own
// Kafka version) on its own local cluster, waits for a healthy 3-broker
// cluster (KRaft, or ZooKeeper mode for the zookeeper layout), force-deletes
// broker 1's pod, and checks it comes back as a new pod with the same PVC
// and PV, registered again with no under-replicated partition.
func TestKafkaOnLocalCluster(t *testing.T) {
	for _, l := range manifests.Layouts() {
		t.Run(l.Name, func(t *testing.T) { testKafkaLayout(t, l) })
	}
}

func testKafkaLayout(t *testing.T, l manifests.Layout) {
	if testing.Short() {
		t.Skip("-short: needs the built control plane and the Kafka jars")
	}
	version, err := l.KafkaVersion()
	if err != nil {
		t.Fatal(err)
	}
	dist, err := kafkadist.Find(version)
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
			logs, _ := filepath.Glob(filepath.Join(state, "pods", l.Namespace+"_*", "kafka.log"))
			for _, l := range logs {
				t.Logf("%s:\n%s", l, tailFile(l, 40))
			}
			t.Logf("node agent log:\n%s", tailFile(c.agent().logFile(), 40))
		}
		if err := c.Down(ctx, false); err != nil {
			t.Errorf("down: %v", err)
		}
		checkHostLeftClean(t, state)
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
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitLong(t, ctx, kafkaReadyTimeout, fmt.Sprintf("%d Ready pods", l.Pods), func() (string, bool) {
		seen, ready, err := l.ReadyPods(ctx, cs)
		return fmt.Sprint(seen, err), ready == l.Pods
	})
	t.Logf("%d pods Ready %s after apply", l.Pods, time.Since(start).Round(time.Millisecond))
	// Applying again is a no-op: server-side apply with one field manager.
	if _, err := l.Apply(ctx, cfg); err != nil {
		t.Errorf("second apply: %v", err)
	}

	res := nodeagent.Resolver{Path: filepath.Join(state, nodeagent.HostsPath)}
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.StatefulSet+"-0.kafka-headless."+l.Namespace+".svc.cluster.local:9092"), kgo.Dialer(res.DialContext))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for name, want := range map[string]string{
		"kafka-headless." + l.Namespace + ".svc.cluster.local": "",        // a headless service: any of its pods
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
			opts := []kafkaadmin.HealthOption{kafkaadmin.WithBrokers(0, 1, 2)}
			if l.ZooKeeper.InUse() {
				opts = append(opts, kafkaadmin.WithZooKeeperMode())
			}
			h, err := kafkaadmin.New(cl).CheckHealth(ctx, opts...)
			if err != nil {
				return err.Error(), false
			}
			return h.String(), h.Healthy()
		})
	}
	healthy("a healthy Kafka cluster")
	// kubectl logs: the API server asks the node agent for the log.
	logs, err := cs.CoreV1().Pods(l.Namespace).GetLogs(l.StatefulSet+"-0", &corev1.PodLogOptions{}).DoRaw(ctx)
	started := "Kafka Server started" // KRaft's KafkaRaftServer
	if l.ZooKeeper.InUse() {
		started = "] started (kafka.server.KafkaServer)"
	}
	if err != nil || !strings.Contains(string(logs), started) {
		t.Errorf("logs of %s-0 through the API server: %v, %d bytes without %q", l.StatefulSet, err, len(logs), started)
	}
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "kafkachaos-e2e"); err != nil {
		t.Fatal(err)
	}
	healthy("the topic fully replicated")
	checkPause(t, ctx, cs, cfg, l)
	healthy("the paused broker back in every ISR")
	checkPartition(t, ctx, cs, cfg, l, state)
	healthy("the partitioned broker back in every ISR")

	victim := l.StatefulSet + "-1"
	old, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(l.Namespace).Get(ctx, "data-"+victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(l.Namespace).Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}); err != nil {
		t.Fatal(err)
	}
	forced := time.Now()
	waitLong(t, ctx, kafkaReadyTimeout, victim+" back as a new Ready pod", func() (string, bool) {
		p, err := cs.CoreV1().Pods(l.Namespace).Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("uid %s ready %t", p.UID, kube.PodReady(p)), p.UID != old.UID && kube.PodReady(p)
	})
	healthy("broker 1 registered again and every ISR full")
	t.Logf("%s force-deleted; healthy again %s later", victim, time.Since(forced).Round(time.Millisecond))
	pvc2, err := cs.CoreV1().PersistentVolumeClaims(l.Namespace).Get(ctx, "data-"+victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc2.UID != pvc.UID || pvc2.Spec.VolumeName != pvc.Spec.VolumeName {
		t.Errorf("%s's claim changed: %s -> %s (was %s -> %s)", victim, pvc2.UID, pvc2.Spec.VolumeName, pvc.UID, pvc.Spec.VolumeName)
	}
}
