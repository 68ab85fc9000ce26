package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// loadRESTConfig builds a client config from, in order: the kubeconfig
// path given (--kubeconfig), the files in $KUBECONFIG, ~/.kube/config, and
// the embedded local cluster's kubeconfig ~/.kafkachaos/local/kubeconfig.
// kubeContext, when set, overrides the current context. A kubeconfig that
// is missing, unreadable or invalid is a usage error (exit 2).
func loadRESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules, err := loadingRules(kubeconfig)
	if err != nil {
		return nil, usageError{err}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, usageError{fmt.Errorf("kubeconfig: %w", err)}
	}
	return cfg, nil
}

// loadingRules picks the kubeconfig files. clientcmd's defaults are not
// used as they are: they read $HOME once, at start-up, and do not know the
// local cluster's path.
func loadingRules(explicit string) (*clientcmd.ClientConfigLoadingRules, error) {
	if explicit != "" {
		if err := readable(explicit); err != nil {
			return nil, fmt.Errorf("--kubeconfig: %w", err)
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
	local := filepath.Join(home, ".kafkachaos", "local", "kubeconfig")
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
