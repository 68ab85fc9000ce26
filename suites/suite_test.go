package suites

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kgo"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// Suite-level timeouts and polls.
const (
	clusterUpTimeout   = 10 * time.Minute // includes go build of the agent binary
	clusterDownTimeout = 3 * time.Minute
	kafkaReadyTimeout  = 5 * time.Minute
	healthTimeout      = 4 * time.Minute
	healthPoll         = time.Second
	cleanupTimeout     = 5 * time.Minute
	logLinesOnFailure  = 60
)

// flagsIn holds the flags after `--`; they must be registered before the
// testing package parses the command line.
var flagsIn = registerFlags(flag.CommandLine)

// env is what every spec runs against. BeforeSuite sets it once; specs
// only read it.
type env struct {
	cfg Config
	// cs is the identity the specs act with. On the local cluster it is
	// the ServiceAccount of manifests/rbac (least privilege), so a call
	// the RBAC manifest does not allow fails the spec; on an existing
	// cluster it is the kubeconfig's user.
	cs       kubernetes.Interface
	csConfig *rest.Config // cs's REST config
	exec     chaos.Exec   // pods/exec as cs
	// admin (and rest) set the cluster up: deploy Kafka, grant RBAC,
	// delete namespaces, dump a failed spec's namespace.
	admin     kubernetes.Interface
	rest      *rest.Config
	namespace string
	flavor    brokers.Flavor
	bootstrap []string
	kgoOpts   []kgo.Opt // how the suite's clients reach the brokers
	runID     string
	local     *localcluster.Cluster // nil on an existing cluster
	// own marks a Kafka a spec deployed for itself (ownKafka): nobody's
	// data is on it, so losing it is the spec's to decide.
	own bool
	// zkConnect is the brokers' zookeeper.connect in ZooKeeper mode; ""
	// in KRaft mode.
	zkConnect string
}

var suite *env

func TestSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the suites run a Kubernetes cluster and Kafka")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "kafkachaos resilience suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg, err := flagsIn.load()
	Expect(err).NotTo(HaveOccurred())
	e := &env{cfg: cfg, namespace: cfg.Target.Namespace, runID: cfg.RunID}
	if e.runID == "" {
		e.runID = newRunID()
	}
	suite = e
	By(fmt.Sprintf("run %s: namespace %s, %d records/s", e.runID, e.namespace, cfg.SteadyState.Rate))
	switch {
	case cfg.DryRun && cfg.Local() && cfg.Target.StateDir == "":
		By("dry-run: would bring up the embedded local cluster and deploy manifests/kafka (" + cfg.Target.Layout + ")")
		return
	case cfg.DryRun && cfg.Local():
		attachDryRun(ctx, e)
	case cfg.Local():
		bringUpLocal(ctx, e)
	default:
		rc, err := existingCluster(cfg.Target)
		Expect(err).NotTo(HaveOccurred())
		e.rest = rc
		e.cs, err = kubernetes.NewForConfig(rc)
		Expect(err).NotTo(HaveOccurred())
		e.admin, e.csConfig = e.cs, rc
		e.bootstrap = cfg.Target.Bootstrap
		sec, err := cfg.Target.Security.Resolve()
		Expect(err).NotTo(HaveOccurred())
		e.kgoOpts = sec.Opts()
	}

	e.exec, err = chaos.NewExec(e.csConfig)
	Expect(err).NotTo(HaveOccurred())

	By("checking that namespace " + e.namespace + " opts in to disruption")
	Expect(chaos.CheckNamespace(ctx, e.cs, e.namespace)).To(Succeed())

	By("checking that no earlier run left a fault behind (ledger annotations)")
	left, err := chaos.RecoverAll(ctx, e.cs, e.access(), []string{e.namespace}, "", true)
	Expect(err).NotTo(HaveOccurred())
	Expect(left).To(BeEmpty(), "an earlier run left faults in place: run kafkachaos recover --kubeconfig ... first")

	flavor, err := brokers.ParseFlavor(cfg.Target.Flavor)
	Expect(err).NotTo(HaveOccurred())
	if flavor == "" {
		flavor = detectFlavor(ctx, e)
	}
	e.flavor = flavor

	expectReachable(ctx, e)

	snap, err := e.snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	if connect, ok := zooKeeperMode(snap); ok {
		e.zkConnect = connect
		By("the brokers run in ZooKeeper mode (zookeeper.connect " + connect + "): health asks for a controller broker and a whole ensemble instead of a KRaft quorum")
	}
	By("waiting until Kafka is healthy: every broker registered, every ISR full, " + e.metadataHealth())
	if err := waitHealthy(ctx, e, brokerIDs(snap)); err != nil {
		Fail(fmt.Sprintf("%v\n%s", err, brokerDiagnosis(ctx, e, snap)))
	}
	expectSafe(ctx, e, snap)
	recordEnvironment(ctx, e, snap)

	if e.cfg.Target.StatefulSet == "" {
		// What the rolling-restart, config-change and scale specs change:
		// the brokers' own StatefulSet, unless the config names one.
		sts, err := brokers.BrokerStatefulSet(ctx, e.cs, e.namespace, snap)
		switch {
		case err == nil:
			e.cfg.Target.StatefulSet = sts
			By("the brokers' StatefulSet (from their pods' owner references): " + sts)
		case errors.Is(err, brokers.ErrNoStatefulSet):
			By("no StatefulSet owns the broker pods: the specs that change one will say so")
		default:
			Expect(err).NotTo(HaveOccurred(), "choosing the StatefulSet to roll: set -kafkachaos.statefulset")
		}
	}

	// Belt and braces: every spec recovers its own fault; whatever this
	// run's ledger still holds at the end is recovered here, and is a bug.
	DeferCleanup(func(ctx SpecContext) {
		By("recovering anything this run's ledger still holds")
		left, err := chaos.RecoverAll(ctx, e.cs, e.access(), []string{e.namespace}, e.runID, e.cfg.DryRun)
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(BeEmpty(), "faults the specs did not recover themselves")
	}, NodeTimeout(cleanupTimeout))
}, NodeTimeout(clusterUpTimeout+kafkaReadyTimeout+reachTimeout+healthTimeout))

// grantRBAC applies manifests/rbac for the suite's ServiceAccount (in the
// suite's namespace) over namespaces.
func grantRBAC(ctx context.Context, e *env, namespaces ...string) error {
	raw, err := manifests.RBAC(e.namespace, namespaces...)
	if err != nil {
		return err
	}
	_, err = kube.Apply(ctx, e.rest, raw)
	return err
}

// saTokenLifetime outlasts the longest run (make chaos's 190 minutes).
const saTokenLifetime = 4 * time.Hour

// serviceAccountConfig returns a REST config that authenticates as the
// ServiceAccount of manifests/rbac in namespace, with a token from the
// TokenRequest API: the same identity a pod running the suite gets.
func serviceAccountConfig(ctx context.Context, admin kubernetes.Interface, adminCfg *rest.Config, namespace string) (*rest.Config, error) {
	secs := int64(saTokenLifetime.Seconds())
	tok, err := admin.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, manifests.ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for %s/%s: %w", namespace, manifests.ServiceAccount, err)
	}
	cfg := rest.AnonymousClientConfig(adminCfg) // the CA, no client certificate
	cfg.BearerToken = tok.Status.Token
	return cfg, nil
}

// detectFlavor finds the flavor of the namespace's Kafka: a Strimzi or
// Koperator resource first (its pod selector fills an empty
// target.selector), else the pods' shape.
func detectFlavor(ctx context.Context, e *env) brokers.Flavor {
	By("detecting the Kafka flavor: operator resources first, then the pods")
	dyn, err := dynamic.NewForConfig(e.csConfig)
	Expect(err).NotTo(HaveOccurred())
	ds, err := brokers.DetectOperator(ctx, dyn, e.namespace)
	Expect(err).NotTo(HaveOccurred())
	switch {
	case len(ds) > 1 && e.cfg.Target.Selector == "":
		Fail(fmt.Sprintf("namespace %s holds %d operator-managed Kafka clusters (%v): set target.flavor and target.selector", e.namespace, len(ds), ds))
	case len(ds) == 1:
		d := ds[0]
		By(fmt.Sprintf("found %s: brokers %v, controllers %v", d, d.Brokers, d.Controllers))
		if e.cfg.Target.Selector == "" {
			e.cfg.Target.Selector = d.Selector
		}
		return d.Flavor
	}
	flavor, err := brokers.DetectFlavor(ctx, e.cs, e.namespace, e.cfg.Target.Selector)
	Expect(err).NotTo(HaveOccurred())
	return flavor
}

// existingCluster returns the REST config of target's cluster: the pod's
// ServiceAccount in cluster, else the kubeconfig.
func existingCluster(t TargetConfig) (*rest.Config, error) {
	if t.InCluster {
		By("connecting to the cluster as this pod's ServiceAccount")
		return rest.InClusterConfig()
	}
	By("connecting to the cluster in " + t.Kubeconfig)
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: t.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: t.Context}).ClientConfig()
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// client returns a Kafka client of the suite's own for e's brokers, with
// opts; closing it is the caller's job.
func (e *env) client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(e.bootstrap...)}, e.kgoOpts...), opts...)...)
}

// withKafka runs fn with a Kafka client of the suite's own, for admin
// requests, and closes it after.
func (e *env) withKafka(fn func(*kafkaadmin.Client) error) error {
	cl, err := e.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(kafkaadmin.New(cl))
}

// access is what recovering a fault needs besides the API: pods/exec, and
// Kafka to move partitions back.
func (e *env) access() chaos.Access {
	return chaos.Access{Exec: e.exec, Kafka: mover{e}}
}

// mover moves partitions through a client of the suite's own per call, as
// its other Kafka calls do.
type mover struct{ e *env }

func (m mover) Assignments(ctx context.Context, topics ...string) (a kafkaadmin.Assignments, err error) {
	err = m.e.withKafka(func(cl *kafkaadmin.Client) error {
		a, err = cl.Assignments(ctx, topics...)
		return err
	})
	return a, err
}

func (m mover) Reassign(ctx context.Context, to kafkaadmin.Assignments, throttle int64) error {
	return m.e.withKafka(func(cl *kafkaadmin.Client) error { return cl.Reassign(ctx, to, throttle) })
}

// snapshot returns every broker's identity on Kubernetes.
func (e *env) snapshot(ctx context.Context) ([]brokers.Broker, error) {
	return brokers.Snapshot(ctx, e.cs, e.namespace, e.cfg.Target.Selector, e.flavor)
}

// faultTarget is what every fault of this run aims at.
func (e *env) faultTarget() chaos.Target {
	return chaos.Target{Client: e.cs, Namespace: e.namespace, RunID: e.runID, DryRun: e.cfg.DryRun, Out: GinkgoWriter}
}

// brokerIDs lists the IDs of the snapshot's brokers (not controllers-only).
func brokerIDs(bs []brokers.Broker) []int32 {
	var ids []int32
	for _, b := range bs {
		if b.BrokerRole {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// healthError returns nil when the cluster is healthy with every broker in
// ids registered, or an error listing what is wrong.
func healthError(ctx context.Context, e *env, ids []int32) error {
	return e.withKafka(func(cl *kafkaadmin.Client) error {
		opts := []kafkaadmin.HealthOption{kafkaadmin.WithBrokers(ids...)}
		if e.zkConnect != "" {
			opts = append(opts, kafkaadmin.WithZooKeeperMode())
		}
		h, err := cl.CheckHealth(ctx, opts...)
		if err != nil {
			return err
		}
		if p := append(h.Problems(), ensembleProblems(ctx, e)...); len(p) > 0 {
			return fmt.Errorf("%s", strings.Join(p, "; "))
		}
		return nil
	})
}

// metadataHealth says what health asks of the metadata's keepers.
func (e *env) metadataHealth() string {
	if e.zkConnect != "" {
		return "a controller broker, the ZooKeeper ensemble led and in sync"
	}
	return "the quorum caught up"
}

// waitHealthy waits for health and returns, instead of failing, what was
// last observed when it never came.
func waitHealthy(ctx context.Context, e *env, ids []int32) error {
	return InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error { return healthError(ctx, e, ids) }).
			WithTimeout(healthTimeout).WithPolling(healthPoll).Should(Succeed(), "Kafka health")
	})
}

// On failure, put what a person needs into the report: pods, events and
// the brokers' logs.
var _ = JustAfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() || suite == nil || suite.admin == nil {
		return
	}
	AddReportEntry("namespace dump", dumpNamespace(ctx, suite.admin, suite.namespace), ReportEntryVisibilityFailureOrVerbose)
}, NodeTimeout(time.Minute))

// dumpNamespace describes ns's pods and events and tails every pod's log.
func dumpNamespace(ctx context.Context, cs kubernetes.Interface, ns string) string {
	var b strings.Builder
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "pods: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "pods in %s:\n", ns)
	for _, p := range pods.Items {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		fmt.Fprintf(&b, "  %s uid=%s node=%s ip=%s phase=%s ready=%t restarts=%d\n", p.Name, p.UID, p.Spec.NodeName, p.Status.PodIP,
			p.Status.Phase, kube.PodReady(&p), restarts)
	}
	if evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		sort.Slice(evs.Items, func(i, j int) bool { return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp) })
		fmt.Fprintf(&b, "events in %s:\n", ns)
		for _, ev := range evs.Items {
			fmt.Fprintf(&b, "  %s %s %s/%s %s: %s\n", ev.LastTimestamp.Format(time.TimeOnly), ev.Type, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Message)
		}
	}
	tail := int64(logLinesOnFailure)
	for _, p := range pods.Items {
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			raw, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: &tail}).DoRaw(ctx)
			fmt.Fprintf(&b, "--- log of %s, container %s (last %d lines) ---\n%s", p.Name, c.Name, tail, raw)
			if err != nil {
				fmt.Fprintf(&b, "(log: %v)\n", err)
			}
		}
	}
	return b.String()
}
