package yourkafka

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/bootstrap"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/localcluster"
)

// Timeouts of the test.
const (
	buildTimeout = 5 * time.Minute
	upTimeout    = 8 * time.Minute  // cluster up and the manifests' pods Ready
	suiteTimeout = 15 * time.Minute // the suite's pod-kill story, bring-up included
	goneTimeout  = 3 * time.Minute  // a namespace deleted, its pods' processes stopped
	downTimeout  = 2 * time.Minute
)

func TestYourOwnKafkaOnTheLocalCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the suite on a local cluster")
	}
	if _, err := kafkadist.Find(kafkadist.DefaultVersion); err != nil && os.Getenv("CI") == "" {
		t.Skipf("Kafka jars missing (CI would fail here): %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*buildTimeout+3*(upTimeout+suiteTimeout))
	defer cancel()
	// kafkachaos (cluster up), and the node binary the local cluster
	// runs, which kafkachaos finds next to it, as make build lays them out.
	bin, node := filepath.Join(state, "kafkachaos"), filepath.Join(state, localcluster.AgentBinaryName)
	suite := filepath.Join(state, "suites.test")
	mustRun(ctx, t, root, nil, "go", "build", "-o", state+string(filepath.Separator), "./cmd/kafkachaos", "./cmd/kafkachaos-node")
	mustRun(ctx, t, root, nil, "go", "test", "-c", "-o", suite, "./suites")
	c, err := localcluster.New(localcluster.WithStateDir(state), localcluster.WithAgentBinary(node))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
		defer cancel()
		if err := c.Down(ctx, true); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	env := append(os.Environ(), "KAFKACHAOS_REPORT_DIR="+filepath.Join(state, "reports"))
	suiteArgs := func(namespace string) []string {
		return []string{"-test.v", "-test.run=TestSuites", "-ginkgo.v", "-ginkgo.label-filter=pod-kill && gate",
			"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + node, "-kafkachaos.namespace=" + namespace}
	}

	t.Run("the gate's pod kill on a Kafka of other names, ports and node IDs", func(t *testing.T) {
		up := mustRun(ctx, t, root, nil, bin, "cluster", "up", "--state-dir", state, "--manifest", "suites/testdata/your-kafka")
		if want := "-kafkachaos.namespace=events"; !strings.Contains(up, want) {
			t.Errorf("cluster up's output lacks the suite's command (%q):\n%s", want, up)
		}
		out, err := run(ctx, t, filepath.Join(root, "suites"), env, suite, suiteArgs("events")...)
		if err != nil {
			t.Fatalf("the suite against your own Kafka: %v", err)
		}
		for _, want := range []string{
			"testing your own Kafka in namespace events: nothing is deployed",
			"bootstrapping from the brokers' advertised listeners: [events-kafka-",
			".events-kafka-headless.events.svc.cluster.local:9094",
			"the brokers' StatefulSet (from their pods' owner references): events-kafka",
			"Ran 1 of",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the suite's output lacks %q", want)
			}
		}
		if strings.Contains(out, "deploying Kafka") {
			t.Error("the suite deployed a Kafka of its own over yours")
		}

		// The chart's bootstrap Service: its cluster IP answers (the node
		// agent's service proxy), after the story replaced a broker pod.
		cs, err := c.Clientset()
		if err != nil {
			t.Fatal(err)
		}
		svc, err := cs.CoreV1().Services("events").Get(ctx, "events-kafka", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seed := net.JoinHostPort(svc.Spec.ClusterIP, "9094")
		_, adv, err := bootstrap.Discover(ctx, []string{seed})
		if err != nil {
			t.Fatalf("a client bootstrapping through the Service's cluster IP %s: %v", seed, err)
		}
		if len(adv) != 3 {
			t.Errorf("through the cluster IP, metadata names %v, want 3 brokers", adv)
		}
	})

	// A team's own scenario, in a module of its own that imports the
	// engine (examples/pause-leader), against the same Kafka.
	t.Run("a scenario of one's own, in its own module, on your Kafka", func(t *testing.T) {
		out := mustRun(ctx, t, filepath.Join(root, "examples", "pause-leader"),
			append(os.Environ(), "KAFKACHAOS_STATE_DIR="+state, "KAFKACHAOS_NAMESPACE=events"),
			"go", "test", "-count=1", "-v", "-run", "TestPauseLeader", "./")
		for _, want := range []string{"STEP: injecting the fault: pause pod events/", "--- PASS: TestPauseLeader"} {
			if !strings.Contains(out, want) {
				t.Errorf("the example's output lacks %q", want)
			}
		}
	})

	t.Run("brokers that advertise localhost fail at once, naming it", func(t *testing.T) {
		// The first Kafka's three JVMs go first: this one needs no company.
		cs, err := c.Clientset()
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, "events", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		var left []corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, time.Second, goneTimeout, true, func(ctx context.Context) (bool, error) {
			pods, err := cs.CoreV1().Pods("events").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			left = pods.Items
			return len(left) == 0, nil
		})
		if err != nil {
			t.Fatalf("namespace events: %d pods left after %s", len(left), goneTimeout)
		}
		mustRun(ctx, t, root, nil, bin, "cluster", "up", "--state-dir", state, "--manifest", "suites/testdata/kafka-advertises-localhost.yaml")
		start := time.Now()
		out, err := run(ctx, t, filepath.Join(root, "suites"), env, suite, suiteArgs("kafka-localhost")...)
		t.Logf("the suite stopped %s after it started", time.Since(start).Round(100*time.Millisecond))
		if err == nil {
			t.Fatal("the suite passed against brokers that advertise localhost")
		}
		if want := "broker 0 (pod kafka-0): want an advertised host that resolves to its own pod's IP"; !strings.Contains(out, want) {
			t.Errorf("the suite's output lacks %q", want)
		}
		if !strings.Contains(out, "localhost:9092, which resolves to 127.0.0.1") {
			t.Error("the suite's output does not name localhost as the cause")
		}
		if strings.Contains(out, "Kafka health") {
			t.Error("the suite waited for health before it named the cause")
		}
	})
}

// run runs name in dir with env (nil: the test's), logging its output,
// and returns the output and the exit error.
func run(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out)
	return string(out), err
}

func mustRun(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := run(ctx, t, dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}
