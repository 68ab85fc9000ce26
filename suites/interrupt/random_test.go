package interrupt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// The random interrupts' knobs: how many points (make test runs a few;
// make soak-interrupts many), and the seed that replays a run.
const (
	pointsEnv     = "KAFKACHAOS_INTERRUPT_POINTS"
	seedEnv       = "KAFKACHAOS_INTERRUPT_SEED"
	defaultPoints = 3
	// maxDelay bounds the signal's moment after the fault is injected:
	// with the short timing below, it holds 10 s, is recovered, and the
	// spec ends 15-25 s after the injection (a roll takes longer).
	maxDelay       = 20 * time.Second
	restoreTimeout = 6 * time.Minute // a roll cut short finishes by itself first
	restorePoll    = 2 * time.Second
	injecting      = "injecting the fault:"
)

// interruptible are the faults the random points pick from: a label
// filter that selects one spec each.
var interruptible = []struct{ name, filter string }{
	{"graceful pod delete", "pod-delete"},
	{"node drain", "node-drain"},
	{"rolling restart", "rolling-restart && !config-change"},
	{"config change", "config-change"},
	{"5 s pause of a follower", "pause-short"},
	{"10 s peers-only partition", "peers-only"},
	{"the leader stopped and kept down", "broker-stop-clean"},
}

// signals are what a point sends: SIGINT, after which the suite must
// recover by itself, or SIGKILL, after which kafkachaos recover must.
var signals = []struct {
	name string
	sig  syscall.Signal
}{{"SIGINT", syscall.SIGINT}, {"SIGKILL", syscall.SIGKILL}}

// interruptPoints is how many random points to try: $KAFKACHAOS_INTERRUPT_POINTS,
// or defaultPoints.
func interruptPoints(t *testing.T) int {
	v := os.Getenv(pointsEnv)
	if v == "" {
		return defaultPoints
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", pointsEnv, v)
	}
	return n
}

// pointTimeout bounds one random point: the suite's start up to its steady
// state, the delay, its exit, and the restore.
const pointTimeout = drainTimeout + maxDelay + exitTimeout + restoreTimeout

// interruptAtRandom sends SIGINT or SIGKILL (then runs kafkachaos recover,
// twice) to the suite at a random moment between the injection of a fault
// picked at random and the end of its recovery (before the injection there
// is nothing to recover), at each of a number of points; after each it checks
// that the cluster is restored: no node cordoned, no ledger entry, no
// partition policy, no frozen process, the StatefulSet as it was and rolled
// out, every pod Ready, Kafka healthy. The seed and each point's choices
// are logged, so a failure can be replayed with KAFKACHAOS_INTERRUPT_SEED.
func interruptAtRandom(ctx context.Context, t *testing.T, c *localcluster.Cluster, root, suite string, env []string, state, bin, node string, points int) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", seedEnv, v)
		}
		seed = s
	}
	t.Logf("random interrupts: %d points, seed %d (replay: %s=%d)", points, seed, seedEnv, seed)
	config := filepath.Join(state, "random.yaml")
	if err := os.WriteFile(config, []byte("timing: {warmup: 2s, baseline: 5s, hold: 10s, after: 5s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ensureKafka(ctx, t, c)
	cs := clientset(t, c)
	before := statefulSet(ctx, t, cs)
	kafka := kafkaClient(t, state)
	kubeconfig := c.KubeconfigPath()
	restored, landed := 0, 0 // landed: the signal came while the spec ran
	for i := range points {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		f := interruptible[rng.IntN(len(interruptible))]
		delay := time.Duration(rng.Int64N(int64(maxDelay)))
		sig := signals[rng.IntN(len(signals))]
		ok := t.Run(fmt.Sprintf("point %d: %s %s into the %s", i+1, sig.name, delay.Round(time.Millisecond), f.name), func(t *testing.T) {
			args := []string{"-test.v", "-ginkgo.v", "-ginkgo.label-filter=" + f.filter, "-kafkachaos.config=" + config,
				"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + node}
			sr := startUntil(ctx, t, root, suite, args, env, injecting)
			sent := false
			select {
			case err := <-sr.exited:
				sr.exited <- err
			case <-time.After(delay):
				if err := sr.cmd.Process.Signal(sig.sig); err != nil {
					t.Fatal(err)
				}
				sent = true
			}
			sr.wait(t)
			switch {
			case sent && sig.sig == syscall.SIGKILL && !strings.Contains(sr.out.String(), "Ran 1 of"):
				landed++
				// Nothing of the suite ran its cleanup: what it left
				// is recover's to undo, and a second recover finds
				// nothing.
				t.Logf("recover after SIGKILL:\n%s", run(ctx, t, root, bin, "recover", "--kubeconfig", kubeconfig))
				if out := run(ctx, t, root, bin, "recover", "--kubeconfig", kubeconfig); !strings.Contains(out, "nothing to recover") {
					t.Errorf("second recover printed %q, want nothing to recover", out)
				}
			case strings.Contains(sr.out.String(), "Interrupted by User"):
				landed++
			default:
				t.Logf("the signal came after the spec's end: nothing was interrupted")
			}
			var last []string
			err := wait.PollUntilContextTimeout(ctx, restorePoll, restoreTimeout, true, func(ctx context.Context) (bool, error) {
				last = restoreProblems(ctx, t, cs, kafka, before)
				return len(last) == 0, nil
			})
			if err != nil {
				t.Fatalf("not restored %s after the suite exited:\n%s", restoreTimeout, strings.Join(last, "\n"))
			}
		})
		if ok {
			restored++
		}
		// Said after each point, so a long run stopped early still tells.
		t.Logf("random interrupts: %d of %d points tried, %d restored", i+1, points, restored)
	}
	t.Logf("random interrupts: %d points, %d of them interrupted a spec, %d restored (seed %d)", points, landed, restored, seed)
}

// restoreProblems says what is not as it was before the interrupts.
func restoreProblems(ctx context.Context, t *testing.T, cs kubernetes.Interface, kafka *kafkaadmin.Client, before *appsv1.StatefulSet) []string {
	t.Helper()
	var p []string
	if n := cordoned(ctx, t, cs); len(n) > 0 {
		p = append(p, fmt.Sprintf("nodes cordoned: %v", n))
	}
	if l := ledgers(ctx, t, cs); len(l) > 0 {
		p = append(p, fmt.Sprintf("ledger entries: %v", l))
	}
	if n := partitionPolicies(ctx, t, cs); len(n) > 0 {
		p = append(p, fmt.Sprintf("partition policies: %v", n))
	}
	if n := stoppedBrokers(ctx, t, cs); len(n) > 0 {
		p = append(p, fmt.Sprintf("stopped processes: %v", n))
	}
	now := statefulSet(ctx, t, cs)
	if *now.Spec.Replicas != *before.Spec.Replicas {
		p = append(p, fmt.Sprintf("statefulset %s: %d replicas, was %d", now.Name, *now.Spec.Replicas, *before.Spec.Replicas))
	}
	for i, c := range now.Spec.Template.Spec.Containers {
		if i < len(before.Spec.Template.Spec.Containers) && !reflect.DeepEqual(c.Env, before.Spec.Template.Spec.Containers[i].Env) {
			p = append(p, fmt.Sprintf("statefulset %s: container %s's env changed", now.Name, c.Name))
		}
	}
	if seen, done, err := chaos.RolloutDone(ctx, cs, now.Namespace, now.Name); err != nil || !done {
		p = append(p, fmt.Sprintf("not rolled out: %s %v", seen, err))
	}
	l, err := manifests.LayoutNamed("combined")
	if err != nil {
		t.Fatal(err)
	}
	if seen, n, err := kube.ReadyPods(ctx, cs, l.Namespace, l.Pods); err != nil || n != l.Pods {
		p = append(p, fmt.Sprintf("pods not Ready: %s %v", seen, err))
	}
	h, err := kafka.CheckHealth(ctx, kafkaadmin.WithBrokers(0, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range h.Problems() {
		p = append(p, "kafka: "+pr)
	}
	return p
}

// ensureKafka brings the cluster up and deploys the combined layout, if
// the earlier subtests did not (go test -run .../point runs only these).
func ensureKafka(ctx context.Context, t *testing.T, c *localcluster.Cluster) {
	t.Helper()
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := manifests.LayoutNamed("combined")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apply(ctx, rc); err != nil {
		t.Fatal(err)
	}
	since, err := c.NodeAgentStarted()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx, clientset(t, c), kube.Wait{Timeout: drainTimeout, Poll: restorePoll, Since: since}); err != nil {
		t.Fatal(err)
	}
}

// statefulSet returns the combined layout's StatefulSet.
func statefulSet(ctx context.Context, t *testing.T, cs kubernetes.Interface) *appsv1.StatefulSet {
	t.Helper()
	l, err := manifests.LayoutNamed("combined")
	if err != nil {
		t.Fatal(err)
	}
	s, err := cs.AppsV1().StatefulSets(l.Namespace).Get(ctx, l.StatefulSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kafkaClient is an admin client of the combined layout's Kafka, reaching
// its brokers' names through the node agent's hosts file.
func kafkaClient(t *testing.T, state string) *kafkaadmin.Client {
	t.Helper()
	l, err := manifests.LayoutNamed("combined")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.Bootstrap()...),
		kgo.Dialer(nodeagent.Resolver{Path: filepath.Join(state, nodeagent.HostsPath)}.DialContext))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kafkaadmin.New(cl)
}
