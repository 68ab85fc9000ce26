package suites

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/clusters"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Suite-level timeouts and polls.
const (
	clusterUpTimeout   = 10 * time.Minute // includes go build of the agent binary
	clusterDownTimeout = 3 * time.Minute
	kafkaReadyTimeout  = 5 * time.Minute
	healthTimeout      = scenario.HealthTimeout
	healthPoll         = scenario.HealthPoll
	cleanupTimeout     = 5 * time.Minute
	logLinesOnFailure  = 60
)

// flagsIn holds the flags after `--`; they must be registered before the
// testing package parses the command line.
var flagsIn = registerFlags(flag.CommandLine)

// env is what every spec runs against: the story engine's environment
// (scenario.Env: clients, namespace, Kafka, timing, and the Ginkgo side
// of narration and cleanup) and what only the suite needs. BeforeSuite
// sets it once; specs only read it, or aim a clone elsewhere.
type env struct {
	*scenario.Env
	cfg Config
	// rest is the admin's REST config (Env.Admin's): it sets the cluster
	// up: deploy Kafka, grant RBAC. Env.Kube is the identity the specs
	// act with: on the local cluster the ServiceAccount of manifests/rbac
	// (least privilege), so a call the RBAC manifest does not allow fails
	// the spec; on an existing cluster the kubeconfig's user.
	rest  *rest.Config
	local *localcluster.Cluster // nil on an existing cluster
	// own marks a Kafka a spec deployed for itself (ownKafka): nobody's
	// data is on it, so losing it is the spec's to decide.
	own bool
}

// clone is a copy of e, its Env too, that a spec may aim elsewhere
// without touching e.
func (e *env) clone() *env {
	c := *e
	se := *e.Env
	c.Env = &se
	return &c
}

// newEnv is the env of cfg before any cluster is known.
func newEnv(cfg Config) *env {
	runID := cfg.RunID
	if runID == "" {
		runID = newRunID()
	}
	var noAgents string
	switch {
	case cfg.Target.InCluster:
		noAgents = "in-cluster agents: manifests/rbac's ServiceAccount may not create workloads; run the suite from outside the cluster"
	case cfg.Target.Security != (kafkasec.Settings{}):
		noAgents = "in-cluster agents reach PLAINTEXT brokers only, for now"
	}
	javaImage := cfg.Target.JavaImage
	if javaImage == "" && cfg.Target.KafkaVersion != "" {
		javaImage = "apache/kafka:" + cfg.Target.KafkaVersion
	}
	return &env{cfg: cfg, Env: &scenario.Env{
		Namespace: cfg.Target.Namespace, Selector: cfg.Target.Selector, RunID: runID, DryRun: cfg.DryRun, NoAgents: noAgents, JavaImage: javaImage,
		EvidenceDir: filepath.Join(reportDir(), "evidence"),
		Timing:      cfg.Timing.TimingConfig, Bounds: cfg.Bounds, SteadyState: cfg.SteadyState,
		Narrator: ginkgoCaller{}, Cleanups: ginkgoCaller{}, Recorder: ginkgoCaller{},
	}}
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
	e := newEnv(cfg)
	suite = e
	By(fmt.Sprintf("run %s: namespace %s, %d records/s", e.RunID, e.Namespace, cfg.SteadyState.Rate))
	if cfg.DryRun && cfg.Local() && cfg.Target.StateDir == "" {
		By("dry-run: would bring up the embedded local cluster and deploy manifests/kafka (" + cfg.Target.Layout + ")")
		return
	}
	reachCluster(ctx, e)

	e.Exec, err = chaos.NewExec(e.KubeConfig)
	Expect(err).NotTo(HaveOccurred())

	By("checking that namespace " + e.Namespace + " opts in to disruption")
	Expect(chaos.CheckNamespace(ctx, e.Kube, e.Namespace)).To(Succeed())

	By("checking that no earlier run left a fault behind (ledger annotations)")
	left, err := chaos.RecoverAll(ctx, e.Kube, e.Access(), []string{e.Namespace}, "", true)
	Expect(err).NotTo(HaveOccurred())
	Expect(left).To(BeEmpty(), "an earlier run left faults in place: run kafkachaos recover --kubeconfig ... first")

	flavor, err := brokers.ParseFlavor(cfg.Target.Flavor)
	Expect(err).NotTo(HaveOccurred())
	if flavor == "" {
		flavor = detectFlavor(ctx, e)
	}
	e.Flavor = flavor

	expectReachable(ctx, e)

	snap, err := e.Snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	if connect, ok := zooKeeperMode(snap); ok {
		e.ZooKeeperConnect = connect
		By("the brokers run in ZooKeeper mode (zookeeper.connect " + connect + "): health asks for a controller broker and a whole ensemble instead of a KRaft quorum")
	}
	By("waiting until Kafka is healthy: every broker registered, every ISR full, " + e.MetadataHealth())
	if err := e.WaitHealthy(ctx, scenario.BrokerIDs(snap)); err != nil {
		Fail(fmt.Sprintf("%v\n%s", err, brokerDiagnosis(ctx, e, snap)))
	}
	expectSafe(ctx, e, snap)
	recordEnvironment(ctx, e, snap)

	if e.cfg.Target.StatefulSet == "" {
		// What the rolling-restart, config-change and scale specs change:
		// the brokers' own StatefulSet, unless the config names one.
		sts, err := brokers.BrokerStatefulSet(ctx, e.Kube, e.Namespace, snap)
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
		left, err := chaos.RecoverAll(ctx, e.Kube, e.Access(), []string{e.Namespace}, e.RunID, e.cfg.DryRun)
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(BeEmpty(), "faults the specs did not recover themselves")
	}, NodeTimeout(cleanupTimeout))
}, NodeTimeout(clusterUpTimeout+kafkaReadyTimeout+reachTimeout+healthTimeout))

// grantRBAC applies manifests/rbac for the suite's ServiceAccount (in the
// suite's namespace) over namespaces.
func grantRBAC(ctx context.Context, e *env, namespaces ...string) error {
	raw, err := manifests.RBAC(e.Namespace, namespaces...)
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
	dyn, err := dynamic.NewForConfig(e.KubeConfig)
	Expect(err).NotTo(HaveOccurred())
	ds, err := brokers.DetectOperator(ctx, dyn, e.Namespace)
	Expect(err).NotTo(HaveOccurred())
	switch {
	case len(ds) > 1 && e.Selector == "":
		Fail(fmt.Sprintf("namespace %s holds %d operator-managed Kafka clusters (%v): set target.flavor and target.selector", e.Namespace, len(ds), ds))
	case len(ds) == 1:
		d := ds[0]
		By(fmt.Sprintf("found %s: brokers %v, controllers %v", d, d.Brokers, d.Controllers))
		if e.Selector == "" {
			e.cfg.Target.Selector, e.Selector = d.Selector, d.Selector
		}
		return d.Flavor
	}
	flavor, err := brokers.DetectFlavor(ctx, e.Kube, e.Namespace, e.Selector)
	Expect(err).NotTo(HaveOccurred())
	return flavor
}

// reachCluster brings up or reaches the cluster of e's target, registers
// its Down, and sets e's clients: on the local cluster it deploys Kafka
// (unless you test your own) and acts as manifests/rbac's ServiceAccount;
// on an existing one it acts as the kubeconfig's user.
func reachCluster(ctx SpecContext, e *env) {
	cfg := e.cfg
	p := targetCluster(ctx, e)
	By("bringing up (or reaching) " + p.Name())
	// Down is safe after a failed Up; it leaves a cluster it found as it is.
	DeferCleanup(func(ctx SpecContext) {
		By("done with " + p.Name() + ": a cluster this run created is taken down, any other left as it is")
		Expect(p.Down(ctx)).To(Succeed())
	}, NodeTimeout(clusterDownTimeout))
	var err error
	e.rest, err = p.Up(ctx)
	Expect(err).NotTo(HaveOccurred())
	if lp, ok := p.(localcluster.Provider); ok {
		attach(e, lp.Cluster)
		if cfg.DryRun {
			attachDryRun(ctx, e)
		} else {
			prepareLocal(ctx, e, lp.Cluster)
		}
		return
	}
	e.Kube, err = kubernetes.NewForConfig(e.rest)
	Expect(err).NotTo(HaveOccurred())
	e.Admin, e.KubeConfig = e.Kube, e.rest
	e.Bootstrap = cfg.Target.Bootstrap
	sec, err := cfg.Target.Security.Resolve()
	Expect(err).NotTo(HaveOccurred())
	e.KafkaOpts = sec.Opts()
}

// targetCluster is the cluster of e's target: the embedded local one
// (kept in target.stateDir, used as it is in a dry run, else in a
// temporary state dir taken down at the end), or an existing one.
func targetCluster(ctx context.Context, e *env) clusters.Provider {
	t := e.cfg.Target
	if !e.cfg.Local() {
		return clusters.Existing{Kubeconfig: t.Kubeconfig, Context: t.Context, InCluster: t.InCluster}
	}
	return localProvider(ctx, e)
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// On failure, put what a person needs into the report: pods, events and
// the brokers' logs.
var _ = JustAfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() || suite == nil || suite.Admin == nil {
		return
	}
	AddReportEntry("namespace dump", dumpNamespace(ctx, suite.Admin, suite.Namespace), ReportEntryVisibilityFailureOrVerbose)
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
