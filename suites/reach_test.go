package suites

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/bootstrap"
	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

// Waits of the address checks.
const (
	reachTimeout   = 5 * time.Minute // until a broker answers metadata at all
	reachPoll      = 2 * time.Second
	diagnosisLines = 8 // log lines per broker on a health timeout
)

// reach is what lookAtAddresses saw.
type reach struct {
	snap []brokers.Broker
	adv  []bootstrap.Broker
}

// expectReachable finds the brokers on the local cluster before any wait
// for health, and fails in seconds, naming the cause, when their
// addresses cannot work: a broker that advertises a name that does not
// resolve to its own pod, an advertised listener nobody answers on, a
// quorum voter that is no controller's pod. Without a bootstrap (your own
// Kafka) the suite's clients then bootstrap from what the brokers
// advertise. On an existing cluster the host may not resolve the cluster's
// names, so only the configured bootstrap is used, unchecked.
func expectReachable(ctx context.Context, e *env) {
	if !e.cfg.Local() {
		return
	}
	By("finding the brokers' advertised listeners from their pods, and checking each leads back to its own pod")
	var last reach
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, reachPoll, reachTimeout, true, func(ctx context.Context) (bool, error) {
		last, lastErr = lookAtAddresses(ctx, e)
		return lastErr == nil, nil
	})
	if err != nil {
		Fail(fmt.Sprintf("no broker answered metadata within %s: %v\n%s", reachTimeout, lastErr, brokerDiagnosis(ctx, e, last.snap)))
	}
	lookup := nodeagent.Resolver{Path: filepath.Join(e.local.StateDir(), nodeagent.HostsPath)}.Lookup
	checker := bootstrap.Checker{Lookup: lookup}
	expectNoProblems(checker.Advertised(ctx, last.adv, last.snap))
	if len(e.bootstrap) == 0 {
		e.bootstrap = bootstrap.Addrs(last.adv)
		By(fmt.Sprintf("bootstrapping from the brokers' advertised listeners: %v", e.bootstrap))
	}
	// Through the advertised address, now known to work.
	var voters string
	err = e.withKafka(func(cl *kafkaadmin.Client) (err error) {
		voters, err = cl.BrokerConfig(ctx, last.adv[0].ID, "controller.quorum.voters")
		return err
	})
	if err != nil {
		By(fmt.Sprintf("the quorum voters are unchecked: reading controller.quorum.voters of broker %d: %v", last.adv[0].ID, err))
		return
	}
	expectNoProblems(checker.Voters(voters, last.snap))
}

// expectNoProblems fails, listing every problem, unless there is none.
func expectNoProblems(problems []bootstrap.Problem) {
	if len(problems) == 0 {
		return
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.String()
	}
	Fail("the brokers' addresses cannot work, so Kafka would never turn healthy:\n" + strings.Join(lines, "\n"))
}

// lookAtAddresses snapshots the brokers and asks them (the bootstrap, else
// every declared port of their pods) for metadata. An error means try
// again.
func lookAtAddresses(ctx context.Context, e *env) (reach, error) {
	var r reach
	var err error
	if r.snap, err = e.snapshot(ctx); err != nil {
		return r, err
	}
	if len(brokerIDs(r.snap)) == 0 {
		return r, fmt.Errorf("no broker pod of flavor %s in %s (selector %q)", e.flavor, e.namespace, e.cfg.Target.Selector)
	}
	seeds, err := e.seeds(ctx, r.snap)
	if err != nil {
		return r, err
	}
	_, r.adv, err = bootstrap.Discover(ctx, seeds, e.kgoOpts...)
	return r, err
}

// seeds is what the suite's clients dial first: the bootstrap, or before
// it is known, every declared port of the broker pods.
func (e *env) seeds(ctx context.Context, snap []brokers.Broker) ([]string, error) {
	if len(e.bootstrap) > 0 {
		return e.bootstrap, nil
	}
	return bootstrap.Seeds(ctx, e.cs, e.namespace, snap)
}

// brokerDiagnosis says, per broker of snap, what was last seen of it: its
// pod's phase, readiness and restarts, whether Kafka has it registered or
// fenced, what it advertises, and the last lines of its log. It is what a
// health timeout reports, so that a Kafka that never turns healthy names
// its cause.
func brokerDiagnosis(ctx context.Context, e *env, snap []brokers.Broker) string {
	if len(snap) == 0 {
		return "no broker pod was seen"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var registered map[int32]bool
	var hosts map[int32]string
	seeds, kafkaErr := e.seeds(ctx, snap)
	if kafkaErr == nil {
		asked := *e
		asked.bootstrap = seeds
		kafkaErr = asked.withKafka(func(cl *kafkaadmin.Client) (err error) {
			if registered, err = cl.Registrations(ctx); err != nil {
				return err
			}
			hosts, err = cl.BrokerHosts(ctx)
			return err
		})
	}
	var b strings.Builder
	b.WriteString("what was last seen of each broker:\n")
	for _, br := range snap {
		fmt.Fprintf(&b, "broker %d (pod %s): %s; ", br.ID, br.Pod, podState(ctx, e, br.Pod))
		switch fenced, ok := registered[br.ID]; {
		case kafkaErr != nil:
			fmt.Fprintf(&b, "Kafka unknown (%v)", kafkaErr)
		case !ok:
			b.WriteString("not registered in Kafka")
		case fenced:
			b.WriteString("registered, fenced")
		default:
			b.WriteString("registered")
		}
		if h, ok := hosts[br.ID]; ok {
			b.WriteString(", advertises " + h)
		}
		tail := int64(diagnosisLines)
		raw, err := e.admin.CoreV1().Pods(e.namespace).GetLogs(br.Pod, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(&b, "\n  (log: %v)\n", err)
			continue
		}
		fmt.Fprintf(&b, "\n  last %d log lines:\n", tail)
		for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// podState is a pod's phase, readiness and restarts, or why it is unknown.
func podState(ctx context.Context, e *env, name string) string {
	p, err := e.admin.CoreV1().Pods(e.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("pod unknown (%v)", err)
	}
	restarts := int32(0)
	for _, c := range p.Status.ContainerStatuses {
		restarts += c.RestartCount
	}
	return fmt.Sprintf("phase %s, ready %t, restarts %d", p.Status.Phase, kube.PodReady(p), restarts)
}

// expectSafe runs the safety audit once before any story: a deployment
// that cannot lose a broker pod safely would fail every story's audit
// check, so the suite stops at once and names what is unsafe.
func expectSafe(ctx context.Context, e *env, snap []brokers.Broker) {
	By("auditing the deployment once before any story: storage, PDB, spread, replication, stable IDs")
	Expect(auditProblems(ctx, e, snap)).To(BeEmpty(), "the deployment in %s is not safe to disrupt: every story's audit would fail", e.namespace)
}
