package suites

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Waits of the address checks.
const (
	reachTimeout = 5 * time.Minute // until a broker answers metadata at all
	reachPoll    = 2 * time.Second
	// problemsHold is how long the same address problems must persist
	// before the suite stops: a pod just replaced, or a hosts file being
	// rewritten, is not a broken deployment.
	problemsHold   = 15 * time.Second
	diagnosisLines = 8 // log lines per broker on a health timeout
	diagnosisKafka = 15 * time.Second
)

// reach is one look at the brokers' addresses.
type reach struct {
	snap     []brokers.Server
	adv      []bootstrap.Broker
	problems []bootstrap.Problem
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
	_, cidr, err := net.ParseCIDR(localcluster.ServiceCIDR)
	Expect(err).NotTo(HaveOccurred())
	checker := bootstrap.Checker{ServiceCIDR: cidr,
		Lookup: e.local.Resolver().Lookup}
	var last reach
	var lastErr error
	var since time.Time // since when the last problems have persisted
	err = wait.PollUntilContextTimeout(ctx, reachPoll, reachTimeout, true, func(ctx context.Context) (bool, error) {
		last, lastErr = lookAtAddresses(ctx, e, checker)
		switch {
		case errors.Is(lastErr, bootstrap.ErrNoPorts):
			return false, lastErr
		case lastErr != nil:
			since = time.Time{}
			return false, nil
		case len(last.problems) == 0:
			return true, nil
		case since.IsZero():
			since = time.Now()
		}
		return time.Since(since) >= problemsHold, nil
	})
	switch {
	case err == nil && len(last.problems) > 0:
		lines := make([]string, len(last.problems))
		for i, p := range last.problems {
			lines[i] = "  " + p.String()
		}
		Fail(fmt.Sprintf("the brokers' addresses cannot work, so Kafka would never turn healthy (problems on every look for %s):\n%s", problemsHold, strings.Join(lines, "\n")))
	case err != nil:
		Fail(fmt.Sprintf("no broker answered metadata within %s: %v\n%s", reachTimeout, lastErr, brokerDiagnosis(ctx, e, last.snap)))
	}
	if len(e.Bootstrap) == 0 {
		e.Bootstrap = bootstrap.Addrs(last.adv)
		By(fmt.Sprintf("bootstrapping from the brokers' advertised listeners: %v", e.Bootstrap))
	}
}

// lookAtAddresses snapshots the brokers, asks them (the bootstrap, else
// every declared port of their pods) for metadata, and checks what they
// advertise; once that holds, it reads controller.quorum.voters through
// an advertised address and checks the voters against every Kafka pod of
// the namespace (the selector may pick brokers only). An error means look
// again.
func lookAtAddresses(ctx context.Context, e *env, checker bootstrap.Checker) (reach, error) {
	var r reach
	var err error
	if r.snap, err = e.Snapshot(ctx); err != nil {
		return r, err
	}
	if len(scenario.BrokerIDs(r.snap)) == 0 {
		return r, fmt.Errorf("no broker pod of flavor %s in %s (selector %q)", e.Flavor, e.Namespace, e.Selector)
	}
	seeds, err := e.seeds(ctx, r.snap)
	if err != nil {
		return r, err
	}
	if _, r.adv, err = bootstrap.Discover(ctx, seeds, e.KafkaOpts...); err != nil {
		return r, err
	}
	if r.problems = checker.Advertised(ctx, r.adv, r.snap); len(r.problems) > 0 {
		return r, nil
	}
	asked := *e.Env
	asked.Bootstrap = bootstrap.Addrs(r.adv)
	var vals map[string]string // a dynamic quorum's voters are empty, a ZooKeeper broker's absent
	err = asked.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		vals, err = cl.BrokerConfigs(ctx, r.adv[0].ID, "controller.quorum.voters")
		return err
	})
	if err != nil {
		return r, fmt.Errorf("reading controller.quorum.voters of broker %d: %w", r.adv[0].ID, err)
	}
	voters := vals["controller.quorum.voters"]
	all := r.snap
	if e.Selector != "" {
		if all, err = brokers.Snapshot(ctx, e.Kube, e.Namespace, "", e.Flavor); err != nil {
			return r, err
		}
	}
	r.problems = checker.Voters(voters, all)
	return r, nil
}

// seeds is what the suite's clients dial first: the bootstrap, or before
// it is known, every declared port of the broker pods.
func (e *env) seeds(ctx context.Context, snap []brokers.Server) ([]string, error) {
	if len(e.Bootstrap) > 0 {
		return e.Bootstrap, nil
	}
	return bootstrap.Seeds(ctx, e.Kube, e.Namespace, snap)
}

// brokerDiagnosis says, per broker of snap, what was last seen of it: its
// pod's phase, readiness and restarts, whether Kafka has it registered or
// fenced, what it advertises, and the last lines of its log. It is what a
// health timeout reports, so that a Kafka that never turns healthy names
// its cause.
func brokerDiagnosis(ctx context.Context, e *env, snap []brokers.Server) string {
	if len(snap) == 0 {
		return "no broker pod was seen"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	kctx, kcancel := context.WithTimeout(ctx, diagnosisKafka)
	defer kcancel()
	var registered map[int32]bool
	var hosts map[int32]string
	seeds, kafkaErr := e.seeds(ctx, snap)
	if kafkaErr == nil {
		asked := *e.Env
		asked.Bootstrap = seeds
		kafkaErr = asked.WithKafka(func(cl *kafkaadmin.Client) (err error) {
			if registered, err = cl.Registrations(kctx); err != nil {
				return err
			}
			hosts, err = cl.BrokerHosts(kctx)
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
		raw, err := e.Admin.CoreV1().Pods(e.Namespace).GetLogs(br.Pod, &corev1.PodLogOptions{Container: br.Container, TailLines: &tail}).DoRaw(ctx)
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
	p, err := e.Admin.CoreV1().Pods(e.Namespace).Get(ctx, name, metav1.GetOptions{})
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
func expectSafe(ctx context.Context, e *env, snap []brokers.Server) {
	By("auditing the deployment once before any story: storage, PDB, spread, replication, stable IDs")
	Expect(e.AuditProblems(ctx, snap)).To(BeEmpty(), "the deployment in %s is not safe to disrupt: every story's audit would fail", e.Namespace)
}
