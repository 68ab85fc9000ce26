// A file over 400 lines: one test drives every interrupted fault on one
// local cluster, and its process helpers sit next to it.

package interrupt

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/pidfile"
	"github.com/kafkachaos/kafkachaos/localcluster"
)

// Timeouts of the test.
const (
	buildTimeout    = 5 * time.Minute
	drainTimeout    = 10 * time.Minute // until the suite holds the drain (includes cluster up and Kafka)
	exitTimeout     = 5 * time.Minute  // for the interrupted suite to recover and exit
	downTimeout     = 2 * time.Minute
	holdingTheDrain = "holding the drain"
	holdingThePause = "holding the pause for"
	holdingTheCut   = "holding the peers-only partition of"
)

// TestInterruptedFaultsLeaveNothing runs the node-drain spec twice on one
// local cluster: once interrupted with SIGINT while the drain holds (its
// cleanups must uncordon the node and clear the ledger), once killed with
// SIGKILL there (the node stays cordoned, and kafkachaos recover must
// restore it from the ledger), and once through an API server outage that
// outlasts the hold (outage_test.go); then the same with the 45 s pause of a
// broker (SIGINT must resume it; after SIGKILL it stays stopped until
// kafkachaos recover sends SIGCONT); then a SIGKILL while a peers-only
// partition holds (its NetworkPolicy stays until kafkachaos recover).
// Then the API server's audit log proves that a dry run and a run against
// a namespace that does not opt in change nothing (audit_test.go). Last,
// SIGINT at random moments of random faults (random_test.go).
func TestInterruptedFaultsLeaveNothing(t *testing.T) {
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
	points := interruptPoints(t)
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout+5*(drainTimeout+exitTimeout)+time.Duration(points)*pointTimeout)
	defer cancel()
	// kafkachaos (recover), and the node binary the local cluster runs,
	// which finds kafkachaos next to it for the agents' pods.
	bin, node := filepath.Join(state, "kafkachaos"), filepath.Join(state, localcluster.AgentBinaryName)
	suite := filepath.Join(state, "suites.test")
	run(ctx, t, root, "go", "build", "-o", state+string(filepath.Separator), "./cmd/kafkachaos", "./cmd/kafkachaos-node")
	run(ctx, t, root, "go", "test", "-c", "-o", suite, "./suites")

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
	// A drain held for 10 minutes: the signal surely lands while it holds.
	config := filepath.Join(state, "suite.yaml")
	if err := os.WriteFile(config, []byte("timing: {hold: 10m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.v", "-ginkgo.v", "-ginkgo.label-filter=node-drain", "-kafkachaos.config=" + config,
		"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + node}
	env := append(os.Environ(), "KAFKACHAOS_REPORT_DIR="+filepath.Join(state, "reports"))

	t.Run("SIGINT runs the recoveries", func(t *testing.T) {
		sr := startUntil(ctx, t, root, suite, args, env, holdingTheDrain)
		cs := clientset(t, c)
		if n := cordoned(ctx, t, cs); len(n) != 1 {
			t.Fatalf("while the drain holds, cordoned nodes %v, want one", n)
		}
		if err := sr.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		sr.wait(t)
		// The spec's own cleanup must have recovered: the suite's sweep
		// at the end says so when it had to step in.
		for _, want := range []string{"Interrupted by User", "recovered node"} {
			if !strings.Contains(sr.out.String(), want) {
				t.Errorf("the suite's output lacks %q", want)
			}
		}
		if strings.Contains(sr.out.String(), "faults the specs did not recover themselves") {
			t.Error("the spec's cleanup did not recover the drain; the suite's sweep had to")
		}
		if n := cordoned(ctx, t, cs); len(n) != 0 {
			t.Errorf("after SIGINT, nodes still cordoned: %v", n)
		}
		if l := ledgers(ctx, t, cs); len(l) != 0 {
			t.Errorf("after SIGINT, ledger entries left: %v", l)
		}
	})

	t.Run("kafkachaos recover after SIGKILL", func(t *testing.T) {
		sr := startUntil(ctx, t, root, suite, args, env, holdingTheDrain)
		if err := sr.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		sr.wait(t)
		cs := clientset(t, c)
		if n := cordoned(ctx, t, cs); len(n) != 1 {
			t.Fatalf("after SIGKILL, cordoned nodes %v, want the drained one", n)
		}
		if l := ledgers(ctx, t, cs); len(l) == 0 {
			t.Fatal("after SIGKILL, no ledger entry to recover from")
		}
		out := run(ctx, t, root, bin, "recover", "--kubeconfig", c.KubeconfigPath())
		if !strings.Contains(out, "uncordon") {
			t.Errorf("recover printed %q, want an uncordon", out)
		}
		if n := cordoned(ctx, t, cs); len(n) != 0 {
			t.Errorf("after recover, nodes still cordoned: %v", n)
		}
		if l := ledgers(ctx, t, cs); len(l) != 0 {
			t.Errorf("after recover, ledger entries left: %v", l)
		}
		if out := run(ctx, t, root, bin, "recover", "--kubeconfig", c.KubeconfigPath()); !strings.Contains(out, "nothing to recover") {
			t.Errorf("second recover printed %q, want nothing to recover", out)
		}
	})

	outageDuringDrain(ctx, t, apiServerStopped(), c, root, suite, env, state, node)
	if os.Getenv(etcdOutageEnv) != "" {
		outageDuringDrain(ctx, t, etcdStopped(), c, root, suite, env, state, node)
	}

	// The pause: the 45 s pause of the leader of partition 0, signalled
	// while it holds. No broker may be left frozen.
	pauseArgs := []string{"-test.v", "-ginkgo.v", "-ginkgo.label-filter=pause && gameday",
		"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + node}
	t.Run("SIGINT resumes a paused broker", func(t *testing.T) {
		sr := startUntil(ctx, t, root, suite, pauseArgs, env, holdingThePause)
		cs := clientset(t, c)
		if p := stoppedBrokers(ctx, t, cs); len(p) != 1 {
			t.Fatalf("while the pause holds, stopped brokers %v, want one", p)
		}
		if err := sr.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		sr.wait(t)
		if strings.Contains(sr.out.String(), "faults the specs did not recover themselves") {
			t.Error("the spec's cleanup did not resume the broker; the suite's sweep had to")
		}
		if p := stoppedBrokers(ctx, t, cs); len(p) != 0 {
			t.Errorf("after SIGINT, brokers still stopped: %v", p)
		}
		if l := ledgers(ctx, t, cs); len(l) != 0 {
			t.Errorf("after SIGINT, ledger entries left: %v", l)
		}
	})

	t.Run("kafkachaos recover resumes a broker a SIGKILLed suite left paused", func(t *testing.T) {
		sr := startUntil(ctx, t, root, suite, pauseArgs, env, holdingThePause)
		if err := sr.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		sr.wait(t)
		cs := clientset(t, c)
		if p := stoppedBrokers(ctx, t, cs); len(p) != 1 {
			t.Fatalf("after SIGKILL, stopped brokers %v, want the paused one", p)
		}
		if l := ledgers(ctx, t, cs); len(l) != 1 {
			t.Fatalf("after SIGKILL, ledger entries %v, want the pause's", l)
		}
		out := run(ctx, t, root, bin, "recover", "--kubeconfig", c.KubeconfigPath())
		if !strings.Contains(out, "SIGCONT") {
			t.Errorf("recover printed %q, want a SIGCONT", out)
		}
		if p := stoppedBrokers(ctx, t, cs); len(p) != 0 {
			t.Errorf("after recover, brokers still stopped: %v", p)
		}
		if l := ledgers(ctx, t, cs); len(l) != 0 {
			t.Errorf("after recover, ledger entries left: %v", l)
		}
		if out := run(ctx, t, root, bin, "recover", "--kubeconfig", c.KubeconfigPath()); !strings.Contains(out, "nothing to recover") {
			t.Errorf("second recover printed %q, want nothing to recover", out)
		}
	})

	// The partition: the peers-only NetworkPolicy a SIGKILLed suite leaves
	// behind, which only kafkachaos recover removes.
	cutArgs := []string{"-test.v", "-ginkgo.v", "-ginkgo.label-filter=partition && peers-only",
		"-kafkachaos.state-dir=" + state, "-kafkachaos.binary=" + node}
	t.Run("kafkachaos recover removes the policy a SIGKILLed suite left partitioning a broker", func(t *testing.T) {
		sr := startUntil(ctx, t, root, suite, cutArgs, env, holdingTheCut)
		if err := sr.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		sr.wait(t)
		cs := clientset(t, c)
		if p := partitionPolicies(ctx, t, cs); len(p) != 1 {
			t.Fatalf("after SIGKILL, partition policies %v, want the one the spec made", p)
		}
		out := run(ctx, t, root, bin, "recover", "--kubeconfig", c.KubeconfigPath())
		if !strings.Contains(out, "networkpolicy") {
			t.Errorf("recover printed %q, want the policy deleted", out)
		}
		if p := partitionPolicies(ctx, t, cs); len(p) != 0 {
			t.Errorf("after recover, partition policies left: %v", p)
		}
		if out := run(ctx, t, root, bin, "recover", "--kubeconfig", c.KubeconfigPath()); !strings.Contains(out, "nothing to recover") {
			t.Errorf("second recover printed %q, want nothing to recover", out)
		}
	})

	auditSuiteRuns(ctx, t, c, root, suite, env, state, node)
	interruptAtRandom(ctx, t, c, root, suite, env, state, bin, node, points)
}

// partitionPolicies lists the partition fault's NetworkPolicies.
func partitionPolicies(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	list, err := cs.NetworkingV1().NetworkPolicies("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kafkachaos"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// stoppedBrokers lists the pods whose main process (the JVM: the node
// agent's ContainerID is process://PID) is stopped (state T).
func stoppedBrokers(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		for _, st := range p.Status.ContainerStatuses {
			id, ok := strings.CutPrefix(st.ContainerID, "process://")
			if !ok {
				continue
			}
			pid, err := strconv.Atoi(id)
			if err != nil {
				t.Fatalf("pod %s/%s: container ID %q", p.Namespace, p.Name, st.ContainerID)
			}
			if state, err := pidfile.State(pid); err == nil && state == "T" { // an error: gone
				out = append(out, fmt.Sprintf("%s/%s (PID %d)", p.Namespace, p.Name, pid))
			}
		}
	}
	return out
}

// run runs a command in dir and returns its output, failing the test on
// error.
func run(ctx context.Context, t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// suiteRun is a running suite process.
type suiteRun struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan error    // receives Wait's result once
	logged chan struct{} // closed once all of its output is read
}

// startUntil starts the suite and returns once it printed marker; the
// suite's output goes to the test log, and to run.out.
func startUntil(ctx context.Context, t *testing.T, root, suite string, args, env []string, marker string) *suiteRun {
	t.Helper()
	cmd := exec.Command(suite, args...)
	cmd.Dir = filepath.Join(root, "suites")
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen, logged := make(chan struct{}), make(chan struct{})
	run := &suiteRun{cmd: cmd, out: &syncBuffer{}, exited: make(chan error, 1), logged: logged}
	go func() {
		err := cmd.Wait()
		pw.Close() // ends the reader below
		run.exited <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-logged // no t.Log once the test is over
	})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(pr)
		found := false
		for sc.Scan() {
			t.Log(sc.Text())
			run.out.add(sc.Text())
			if !found && strings.Contains(sc.Text(), marker) {
				found = true
				close(seen)
			}
		}
	}()
	select {
	case <-seen:
		return run
	case <-logged: // the output ended: the suite exited early
		t.Fatalf("the suite ended before it printed %q", marker)
	case <-time.After(drainTimeout):
		t.Fatalf("the suite did not print %q within %s", marker, drainTimeout)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return nil
}

// wait waits for the suite to exit, whatever its status, and for the last
// of its output to be read.
func (r *suiteRun) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.exited:
		t.Logf("suite exited: %v", err)
	case <-time.After(exitTimeout):
		t.Fatalf("the suite did not exit within %s of the signal", exitTimeout)
	}
	<-r.logged // the pipe closed with the exit
}

// syncBuffer collects lines from one goroutine for another.
type syncBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *syncBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

func clientset(t *testing.T, c *localcluster.Cluster) kubernetes.Interface {
	t.Helper()
	cs, err := c.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// cordoned lists the unschedulable nodes.
func cordoned(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			names = append(names, n.Name)
		}
	}
	return names
}

// ledgers lists the objects (nodes, StatefulSets and pods) that carry a
// ledger annotation.
func ledgers(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	var found []string
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if v, ok := n.Annotations[chaos.LedgerAnnotation]; ok {
			found = append(found, fmt.Sprintf("node %s: %s", n.Name, v))
		}
	}
	sets, err := cs.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets.Items {
		if v, ok := s.Annotations[chaos.LedgerAnnotation]; ok {
			found = append(found, fmt.Sprintf("statefulset %s/%s: %s", s.Namespace, s.Name, v))
		}
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if v, ok := p.Annotations[chaos.LedgerAnnotation]; ok {
			found = append(found, fmt.Sprintf("pod %s/%s: %s", p.Namespace, p.Name, v))
		}
	}
	return found
}
