package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/bootstrap"
	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/clusters"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

// Target is where a scenario of one's own runs: a namespace that opted in
// to disruption, on a cluster reached by a kubeconfig, or on a local
// cluster kept by kafkachaos cluster up.
type Target struct {
	// Kubeconfig and Context reach the cluster; an empty Kubeconfig means
	// StateDir's, else, in a pod, its ServiceAccount, else
	// clusters.LoadRESTConfig's search ($KUBECONFIG, ~/.kube/config,
	// ~/.kafkachaos/local/kubeconfig).
	Kubeconfig, Context string
	// StateDir is a local cluster's state dir (kafkachaos cluster up
	// --state-dir): its kubeconfig, and its names for the brokers.
	StateDir string
	// Namespace holds the Kafka; Selector picks its broker pods (empty:
	// what brokers.Snapshot finds).
	Namespace, Selector string
	// Bootstrap is host:port of the brokers; empty discovers them from
	// the broker pods' advertised listeners.
	Bootstrap []string
}

// Connect returns an Env of t: the Kubernetes client, pods/exec, the
// flavor of the namespace's Kafka and its brokers' addresses. It refuses a
// namespace that did not opt in to disruption, naming the command that
// opts in. The caller sets the Narrator, Cleanups and Recorder, the run
// ID, and its own timing, bounds and steady state.
func Connect(ctx context.Context, t Target) (*Env, error) {
	x := clusters.Existing{Kubeconfig: t.Kubeconfig, Context: t.Context}
	switch {
	case x.Kubeconfig == "" && t.StateDir != "":
		x.Kubeconfig = filepath.Join(t.StateDir, "kubeconfig")
	case x.Kubeconfig == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		x.InCluster = true // a scenario running in a pod, as client-go's defaults would
	}
	cfg, err := x.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scenario: Kubernetes client: %w", err)
	}
	if err := chaos.CheckNamespace(ctx, cs, t.Namespace); err != nil {
		return nil, err
	}
	exec, err := chaos.NewExec(cfg)
	if err != nil {
		return nil, err
	}
	flavor, err := brokers.DetectFlavor(ctx, cs, t.Namespace, t.Selector)
	if err != nil {
		return nil, fmt.Errorf("scenario: the Kafka of namespace %s: %w", t.Namespace, err)
	}
	e := &Env{Kube: cs, KubeConfig: cfg, Admin: cs, Exec: exec, Namespace: t.Namespace, Selector: t.Selector, Flavor: flavor, Bootstrap: t.Bootstrap}
	if t.StateDir != "" {
		// A local cluster's names resolve through its node agents' hosts file.
		e.Dial = nodeagent.Resolver{Path: filepath.Join(t.StateDir, nodeagent.HostsPath)}.DialContext
		e.KafkaOpts = []kgo.Opt{kgo.Dialer(e.Dial)}
		e.LocalKubelets = true
	}
	if len(e.Bootstrap) == 0 {
		snap, err := e.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		seeds, err := bootstrap.Seeds(ctx, cs, t.Namespace, snap)
		if err != nil {
			return nil, fmt.Errorf("scenario: the brokers' addresses: %w", err)
		}
		_, adv, err := bootstrap.Discover(ctx, seeds, e.KafkaOpts...)
		if err != nil {
			return nil, fmt.Errorf("scenario: the brokers' addresses: %w", err)
		}
		e.Bootstrap = bootstrap.Addrs(adv)
	}
	return e, nil
}
