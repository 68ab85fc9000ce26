package suites

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// zooKeeperMode reports whether the brokers keep their metadata in
// ZooKeeper (their env names a zookeeper.connect), and the connect string.
func zooKeeperMode(snap []brokers.Server) (string, bool) {
	for _, b := range snap {
		if b.ZooKeeperConnect != "" {
			return b.ZooKeeperConnect, true
		}
	}
	return "", false
}

// zooKeeperLeaderPod returns the pod of the ensemble's leader: the pod
// in e's namespace whose IP the leader's address has.
func zooKeeperLeaderPod(ctx context.Context, e *env) (*corev1.Pod, error) {
	ens, ok := e.Ensemble(ctx)
	if !ok {
		return nil, fmt.Errorf("no ZooKeeper ensemble to look at (ZooKeeper mode on the local cluster only)")
	}
	leader, ok := ens.Leader()
	if !ok {
		return nil, fmt.Errorf("the ensemble has no single leader: %s", ens)
	}
	host, _, err := net.SplitHostPort(leader.Addr)
	if err != nil {
		return nil, err
	}
	ip, err := e.local.Resolver().Lookup(host)
	if err != nil {
		return nil, err
	}
	pods, err := e.Kube.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Status.PodIP == ip && p.DeletionTimestamp == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no pod in %s has the ZooKeeper leader's IP %s", e.Namespace, ip)
}

var _ = Describe("The ZooKeeper leader's pod is force-deleted", Label("zookeeper-kill"), Serial, func() {
	storySpec("elects a new ZooKeeper leader, loses no acknowledged record, and the ensemble is whole again", Label(),
		func(_ SpecContext, e *env) story {
			if e.Kube != nil && e.ZooKeeperConnect == "" {
				Skip("the brokers run in KRaft mode: no ZooKeeper ensemble (run with -kafkachaos.layout=zookeeper)")
			}
			return zooKeeperKill()
		})
})

// The make test check of ZooKeeper mode, whatever layout the suite runs:
// the zookeeper layout, deployed for the spec, passes the gate's pod kill
// and the ZooKeeper leader's kill.
var _ = Describe("Kafka 3.9 in ZooKeeper mode, on a cluster of the spec's own", Label("zookeeper-mode"), Serial, func() {
	It("loses no acknowledged record when a broker's pod, then the ZooKeeper leader's pod, is force-deleted", func(ctx SpecContext) {
		l, err := manifests.LayoutNamed("zookeeper")
		Expect(err).NotTo(HaveOccurred())
		l = l.In("kafka-zk-spec")
		version, err := l.KafkaVersion()
		Expect(err).NotTo(HaveOccurred())
		expectKafkaJars(version)
		objs, err := l.Objects()
		Expect(err).NotTo(HaveOccurred())
		e := ownKafka(ctx, l, objs, "ZooKeeper mode runs on a Kafka of the spec's own, of the zookeeper layout")
		Expect(e.ZooKeeperConnect).NotTo(BeEmpty(), "the zookeeper layout's brokers name no zookeeper.connect")

		pk := podKill()
		pk.Round = "broker pod-kill"
		expectPassed(tell(ctx, e, pk))
		zk := zooKeeperKill()
		zk.Round = "ZooKeeper leader kill"
		expectPassed(tell(ctx, e, zk))
	}, SpecTimeout(2*storyTimeout))
})

// zooKeeperKill force-deletes the ZooKeeper leader's pod. No broker is a
// victim; the pod must come back as a new pod, and health waits for the
// ensemble to be whole.
func zooKeeperKill() story {
	var victim *corev1.Pod
	return story{
		Label:          "zookeeper-kill",
		MaxUnavailable: GracefulMaxUnavailable,
		MaxUnavailableWhy: "the ZooKeeper leader's kill: the ensemble elects another within seconds and the brokers' sessions move to it, " +
			"so the producers should hardly notice (measured 0 s); a window as long as the session timeout means the brokers' sessions expired",
		Pick: func(ctx context.Context, e *env, _ string, _ []brokers.Server) ([]brokers.Server, error) {
			p, err := zooKeeperLeaderPod(ctx, e)
			if err != nil {
				return nil, err
			}
			victim = p
			By(fmt.Sprintf("pod %s (%s) leads the ZooKeeper ensemble", p.Name, p.Status.PodIP))
			return nil, nil
		},
		Fault: func(e *env, _ []brokers.Server) chaos.Fault {
			pod := "<the ZooKeeper leader>" // a dry run picks nothing
			if victim != nil {
				pod = victim.Name
			}
			return &chaos.PodDelete{Scope: e.FaultScope(), Pod: pod, Force: true}
		},
		PodsBack: func(ctx context.Context, e *env) error { return zooKeeperPodBack(ctx, e, victim) },
		Finally: func(ctx context.Context, e *env, _ []brokers.Server, o *outcome) {
			if ens, ok := e.Ensemble(ctx); ok {
				o.Observations = append(o.Observations, "ZooKeeper after the kill: "+ens.String())
			}
		},
	}
}

// zooKeeperPodBack waits until the killed ZooKeeper pod is back as a new,
// Ready pod, as waitPodsBack waits for a broker's.
func zooKeeperPodBack(ctx context.Context, e *env, old *corev1.Pod) error {
	if old == nil {
		return errors.New("no ZooKeeper pod was killed")
	}
	return e.WaitPodsBack(ctx, []brokers.Server{{Pod: old.Name, PodUID: old.UID}}, true)
}

// configByStartScript says why a config change by env cannot reach the
// brokers of StatefulSet name, or "" when it can: a container that runs
// kafka-server-start.sh (the zookeeper layout's brokers) takes its config
// from the file and --override arguments, not from KAFKA_* env.
func configByStartScript(ctx context.Context, e *env, name string) (string, error) {
	s, err := e.Kube.AppsV1().StatefulSets(e.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return startScriptWhy(s.Spec.Template.Spec.Containers), nil
}

func startScriptWhy(cs []corev1.Container) string {
	if len(cs) == 0 {
		return ""
	}
	for _, a := range append(slices.Clone(cs[0].Command), cs[0].Args...) {
		if path.Base(a) == "kafka-server-start.sh" {
			return fmt.Sprintf("container %s runs %s: it takes its config from that file and --override arguments, not from env, so the config-change fault (env %s) would not reach Kafka", cs[0].Name, a, configEnv)
		}
	}
	return ""
}

func TestStartScriptWhy(t *testing.T) {
	tests := []struct {
		name string
		cs   []corev1.Container
		want string
	}{
		{"env-configured", []corev1.Container{{Name: "kafka", Image: "apache/kafka:4.4.0"}}, ""},
		{"the start script as the command", []corev1.Container{{Name: "kafka", Command: []string{"/opt/kafka/bin/kafka-server-start.sh", "/etc/kafka/zk/server.properties"}}}, "runs /opt/kafka/bin/kafka-server-start.sh"},
		{"through a shell", []corev1.Container{{Name: "kafka", Command: []string{"sh", "-c"}, Args: []string{"kafka-server-start.sh"}}}, "runs kafka-server-start.sh"},
		{"no container", nil, ""},
	}
	for _, tt := range tests {
		got := startScriptWhy(tt.cs)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
