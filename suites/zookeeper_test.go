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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/zookeeper"
)

// ensembleTimeout bounds one look at the ZooKeeper ensemble: a dead pod's
// IP may never refuse the connection.
const ensembleTimeout = 3 * time.Second

// zooKeeperMode reports whether the brokers keep their metadata in
// ZooKeeper (their env names a zookeeper.connect), and the connect string.
func zooKeeperMode(snap []brokers.Broker) (string, bool) {
	for _, b := range snap {
		if b.ZooKeeperConnect != "" {
			return b.ZooKeeperConnect, true
		}
	}
	return "", false
}

// ensemble looks at the ZooKeeper ensemble that e's brokers connect to,
// from the host: only on the local cluster, whose pods the host reaches;
// false elsewhere.
func ensemble(ctx context.Context, e *env) (zookeeper.Ensemble, bool) {
	if e.zkConnect == "" || e.local == nil {
		return zookeeper.Ensemble{}, false
	}
	var servers []zookeeper.Server
	for _, addr := range brokers.ZooKeeperServers(e.zkConnect) {
		servers = append(servers, zookeeper.Server{Addr: addr})
	}
	ctx, cancel := context.WithTimeout(ctx, ensembleTimeout)
	defer cancel()
	// The cluster's names resolve through its hosts file only: a name
	// missing there (a pod being replaced) is a server that does not
	// answer, never a question to the host's DNS.
	return zookeeper.Check(ctx, servers, zookeeper.WithDialer(e.local.Resolver().DialContext)), true
}

// ensembleProblems are the ensemble's problems, each prefixed, for the
// health check of a cluster in ZooKeeper mode.
func ensembleProblems(ctx context.Context, e *env) []string {
	ens, ok := ensemble(ctx, e)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range ens.Problems() {
		out = append(out, "ZooKeeper: "+p)
	}
	return out
}

// zooKeeperLeaderPod returns the pod of the ensemble's leader: the pod
// in e's namespace whose IP the leader's address has.
func zooKeeperLeaderPod(ctx context.Context, e *env) (*corev1.Pod, error) {
	ens, ok := ensemble(ctx, e)
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
	pods, err := e.cs.CoreV1().Pods(e.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Status.PodIP == ip && p.DeletionTimestamp == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no pod in %s has the ZooKeeper leader's IP %s", e.namespace, ip)
}

// controllerNow is the controller a controller fault aims at: the KRaft
// quorum's leader, or in ZooKeeper mode the controller broker.
func controllerNow(ctx context.Context, e *env) (id int32, what string, err error) {
	err = e.withKafka(func(cl *kafkaadmin.Client) error {
		if e.zkConnect != "" {
			id, what = -1, "the controller broker (ZooKeeper mode)"
			id, err = cl.ControllerBroker(ctx)
			return err
		}
		what = "the active controller"
		id, err = cl.ActiveController(ctx)
		return err
	})
	return id, what, err
}

var _ = Describe("The ZooKeeper leader's pod is force-deleted", Label("zookeeper-kill"), Serial, func() {
	It("elects a new ZooKeeper leader, loses no acknowledged record, and the ensemble is whole again", func(ctx SpecContext) {
		if suite.cs != nil && suite.zkConnect == "" {
			Skip("the brokers run in KRaft mode: no ZooKeeper ensemble (run with -kafkachaos.layout=zookeeper)")
		}
		expectPassed(runStory(ctx, suite, zooKeeperKill()))
	}, SpecTimeout(storyTimeout))
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
		Expect(e.zkConnect).NotTo(BeEmpty(), "the zookeeper layout's brokers name no zookeeper.connect")

		pk := podKill()
		pk.round = "broker pod-kill"
		expectPassed(runStory(ctx, e, pk))
		zk := zooKeeperKill()
		zk.round = "ZooKeeper leader kill"
		expectPassed(runStory(ctx, e, zk))
	}, SpecTimeout(2*storyTimeout))
})

// zooKeeperKill force-deletes the ZooKeeper leader's pod. No broker is a
// victim; the pod must come back as a new pod, and health waits for the
// ensemble to be whole.
func zooKeeperKill() story {
	var victim *corev1.Pod
	return story{
		label:          "zookeeper-kill",
		maxUnavailable: GracefulMaxUnavailable,
		maxUnavailableWhy: "the ZooKeeper leader's kill: the ensemble elects another within seconds and the brokers' sessions move to it, " +
			"so the producers should hardly notice (measured 0 s); a window as long as the session timeout means the brokers' sessions expired",
		pick: func(ctx context.Context, e *env, _ string, _ []brokers.Broker) ([]brokers.Broker, error) {
			p, err := zooKeeperLeaderPod(ctx, e)
			if err != nil {
				return nil, err
			}
			victim = p
			By(fmt.Sprintf("pod %s (%s) leads the ZooKeeper ensemble", p.Name, p.Status.PodIP))
			return nil, nil
		},
		fault: func(e *env, _ []brokers.Broker) chaos.Fault {
			pod := "<the ZooKeeper leader>" // a dry run picks nothing
			if victim != nil {
				pod = victim.Name
			}
			return &chaos.PodDelete{Target: e.faultTarget(), Pod: pod, Force: true}
		},
		podsBack: func(ctx context.Context, e *env) error { return zooKeeperPodBack(ctx, e, victim) },
		finally: func(ctx context.Context, e *env, _ []brokers.Broker, o *outcome) {
			if ens, ok := ensemble(ctx, e); ok {
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
	return waitPodsBack(ctx, e, []brokers.Broker{{Pod: old.Name, PodUID: old.UID}}, true)
}

// configByStartScript says why a config change by env cannot reach the
// brokers of StatefulSet name, or "" when it can: a container that runs
// kafka-server-start.sh (the zookeeper layout's brokers) takes its config
// from the file and --override arguments, not from KAFKA_* env.
func configByStartScript(ctx context.Context, e *env, name string) (string, error) {
	s, err := e.cs.AppsV1().StatefulSets(e.namespace).Get(ctx, name, metav1.GetOptions{})
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
