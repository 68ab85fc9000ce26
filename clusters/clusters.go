package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Provider is one target's cluster.
type Provider interface {
	// Name says which cluster, for narration: "the embedded local
	// cluster in /tmp/x", "the cluster of ~/.kube/config".
	Name() string
	// Up makes the cluster ready, creating it when the provider creates
	// clusters, and returns its admin's REST config.
	Up(ctx context.Context) (*rest.Config, error)
	// Down undoes what Up created: nothing for a cluster it found running
	// or was told to keep. Safe to call after a failed Up.
	Down(ctx context.Context) error
}

// Existing is a cluster someone else runs: reached through a kubeconfig,
// or, from inside a pod, through its ServiceAccount. Down leaves it as it
// is.
type Existing struct {
	// Kubeconfig and Context reach the cluster; see LoadRESTConfig for
	// an empty Kubeconfig.
	Kubeconfig, Context string
	// InCluster uses the pod's ServiceAccount instead of a kubeconfig.
	InCluster bool
}

// Name says which cluster x reaches.
func (x Existing) Name() string {
	switch {
	case x.InCluster:
		return "the cluster this pod runs in (its ServiceAccount)"
	case x.Kubeconfig != "":
		return "the cluster of " + x.Kubeconfig
	default:
		return "the cluster of the default kubeconfig"
	}
}

// Up returns the REST config of x's cluster, changing nothing.
func (x Existing) Up(context.Context) (*rest.Config, error) {
	if x.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("clusters: in-cluster config: %w", err)
		}
		return cfg, nil
	}
	return LoadRESTConfig(x.Kubeconfig, x.Context)
}

// Down leaves the cluster as it is.
func (Existing) Down(context.Context) error { return nil }

// LocalKubeconfig is the kubeconfig of the local cluster that `kafkachaos
// cluster up` keeps by default, under home.
func LocalKubeconfig(home string) string {
	return filepath.Join(home, ".kafkachaos", "local", "kubeconfig")
}

// ErrNoKubeconfig is wrapped by LoadRESTConfig when no kubeconfig can be
// found or read: a usage error, before anything is touched.
var ErrNoKubeconfig = errors.New("no usable kubeconfig")

// LoadRESTConfig builds a client config from, in order: the kubeconfig
// path given, the files in $KUBECONFIG, ~/.kube/config, and the local
// cluster's kubeconfig ~/.kafkachaos/local/kubeconfig. kubeContext, when
// set, overrides the current context. A kubeconfig that is missing,
// unreadable or invalid is an error wrapping ErrNoKubeconfig.
func LoadRESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules, err := loadingRules(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("clusters: %w: %w", ErrNoKubeconfig, err)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("clusters: %w: kubeconfig: %w", ErrNoKubeconfig, err)
	}
	return cfg, nil
}

// loadingRules picks the kubeconfig files. clientcmd's defaults are not
// used as they are: they read $HOME once, at start-up, and do not know the
// local cluster's path.
func loadingRules(explicit string) (*clientcmd.ClientConfigLoadingRules, error) {
	if explicit != "" {
		if err := readable(explicit); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", explicit, err)
		}
		return &clientcmd.ClientConfigLoadingRules{ExplicitPath: explicit}, nil
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		paths := filepath.SplitList(env)
		for _, p := range paths {
			if readable(p) == nil {
				return &clientcmd.ClientConfigLoadingRules{Precedence: paths}, nil
			}
		}
		return nil, fmt.Errorf("$KUBECONFIG=%s names no readable file", env)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("no kubeconfig: --kubeconfig and $KUBECONFIG are not set, and %w", err)
	}
	kube := filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
	if _, err := os.Stat(kube); err == nil {
		return &clientcmd.ClientConfigLoadingRules{Precedence: []string{kube}}, nil
	}
	local := LocalKubeconfig(home)
	if _, err := os.Stat(local); err == nil {
		return &clientcmd.ClientConfigLoadingRules{ExplicitPath: local}, nil
	}
	return nil, fmt.Errorf("no kubeconfig: --kubeconfig and $KUBECONFIG are not set, and neither %s nor %s (kafkachaos cluster up) exists", kube, local)
}

// readable returns nil when path is a file that can be opened.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return errors.New(path + " is a directory")
	}
	return nil
}
