package suites

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kgo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// prepareLocal deploys Kafka on the local cluster c, unless the config
// tests your own (LayoutNone), then grants manifests/rbac and acts as its
// ServiceAccount.
func prepareLocal(ctx context.Context, e *env, c *localcluster.Cluster) {
	if e.cfg.UsersKafka() {
		By("testing your own Kafka in namespace " + e.Namespace + ": nothing is deployed")
	} else {
		layout, err := e.cfg.SpecLayout()
		Expect(err).NotTo(HaveOccurred())
		layout = layout.WithKafkaVersion(e.cfg.Target.KafkaVersion)
		By("deploying Kafka " + e.cfg.Target.KafkaVersion + " from manifests/kafka (" + layout.Name + ")")
		_, err = layout.Apply(ctx, e.rest)
		Expect(err).NotTo(HaveOccurred())
		// Only readiness the running node agent reported counts: a kept
		// cluster brought up again still has its old Ready conditions in etcd.
		since, err := c.NodeAgentStarted()
		Expect(err).NotTo(HaveOccurred())
		Expect(layout.WaitReady(ctx, e.Admin, kube.Wait{Timeout: kafkaReadyTimeout, Poll: healthPoll, Since: since})).To(Succeed())
		e.Bootstrap = layout.Bootstrap()
	}

	// Nothing is granted in a namespace that does not opt in.
	By("checking that namespace " + e.Namespace + " opts in to disruption, before granting anything there")
	Expect(chaos.CheckNamespace(ctx, e.Admin, e.Namespace)).To(Succeed())
	By("granting manifests/rbac in " + e.Namespace + " and acting as its ServiceAccount from here on")
	Expect(grantRBAC(ctx, e, e.Namespace)).To(Succeed())
	actAsServiceAccount(ctx, e)
}

// localProvider is the embedded cluster of e's target: in
// target.stateDir, kept (and in a dry run used as it is, nothing
// started), else in a temporary state dir that Down deletes.
func localProvider(ctx context.Context, e *env) localcluster.Provider {
	if !e.cfg.UsersKafka() && !e.cfg.DryRun {
		expectKafkaJars(e.cfg.Target.KafkaVersion)
	}
	state, keep := e.cfg.Target.StateDir, e.cfg.Target.StateDir != ""
	var err error
	if !keep {
		state, err = os.MkdirTemp("", "kafkachaos-suite-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, state)
	}
	bin := e.cfg.Target.Binary
	if bin == "" && !localcluster.BesideExecutable() && !e.cfg.DryRun {
		// In the state dir, so a cluster left running keeps its agent's
		// program; a kept cluster's existing one is reused as it is. The
		// agent runs kafkachaos, beside it, for the load agents' pods.
		bin = filepath.Join(state, localcluster.AgentBinaryName)
		if _, err := os.Stat(bin); err != nil || !keep {
			By("building kafkachaos-node, which the node agent runs, and kafkachaos, which its agent pods run, into " + state)
			out, err := exec.CommandContext(ctx, "go", "build", "-o", state+string(filepath.Separator), "../cmd/kafkachaos-node", "../cmd/kafkachaos").CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
		}
	}
	c, err := localcluster.New(localcluster.WithStateDir(state), localcluster.WithAgentBinary(bin),
		localcluster.WithLogf(func(f string, a ...any) { GinkgoWriter.Printf(f+"\n", a...) }))
	Expect(err).NotTo(HaveOccurred())
	return localcluster.Provider{Cluster: c, Keep: keep, AsItIs: e.cfg.DryRun}
}

// attachDryRun is a dry run's local cluster: the one running in
// target.stateDir, used as it is. Nothing is started, deployed or granted;
// the one write is the TokenRequest that lets the suite act as its
// ServiceAccount, which creates no object.
func attachDryRun(ctx context.Context, e *env) {
	if !e.cfg.UsersKafka() {
		layout, err := e.cfg.SpecLayout()
		Expect(err).NotTo(HaveOccurred())
		seen, n, err := layout.ReadyPods(ctx, e.Admin)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(layout.Pods), "a dry run deploys nothing: Kafka (%s) must run in %s already (%s)", layout.Name, layout.Namespace, seen)
		e.Bootstrap = layout.Bootstrap()
	}
	_, err := e.Admin.CoreV1().ServiceAccounts(e.Namespace).Get(ctx, manifests.ServiceAccount, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "a dry run grants nothing: manifests/rbac must be granted in %s already (run once without -kafkachaos.dry-run)", e.Namespace)
	By("dry-run: acting as the ServiceAccount of manifests/rbac on the running local cluster in " + e.cfg.Target.StateDir)
	actAsServiceAccount(ctx, e)
}

// attach points e at local cluster c as its admin, and its Kafka clients at
// the cluster's names through the node agent's hosts file.
func attach(e *env, c *localcluster.Cluster) {
	var err error
	e.local = c
	e.rest, err = c.RESTConfig()
	Expect(err).NotTo(HaveOccurred())
	e.Admin, err = c.Clientset()
	Expect(err).NotTo(HaveOccurred())
	e.KafkaOpts = []kgo.Opt{kgo.Dialer(c.Resolver().DialContext)}
	// The host reaches the pods by their cluster names (ZooKeeper's
	// ensemble), and the kubelets are the node agents, read directly.
	e.Dial, e.LocalKubelets = c.Resolver().DialContext, true
}

// actAsServiceAccount makes e's clients act as manifests/rbac's
// ServiceAccount in e's namespace.
func actAsServiceAccount(ctx context.Context, e *env) {
	var err error
	e.KubeConfig, err = serviceAccountConfig(ctx, e.Admin, e.rest, e.Namespace)
	Expect(err).NotTo(HaveOccurred())
	e.Kube, err = kubernetes.NewForConfig(e.KubeConfig)
	Expect(err).NotTo(HaveOccurred())
}

// expectKafkaJars fails at once, before a long wait for pods that cannot
// start, when version's jars are not fetched: the message names the make
// command that fetches them.
func expectKafkaJars(version string) {
	GinkgoHelper()
	expectVersionTabled(suite.cfg, version)
	cache := kafkadist.CacheDir()
	Expect(cache).NotTo(BeEmpty(), "apache/kafka:%s pods need the Kafka jars: run %s", version, kafkadist.FetchCommand(version))
	_, err := kafkadist.InCache(cache, version)
	Expect(err).NotTo(HaveOccurred())
}
