package main

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/clusters"
)

// loadRESTConfig is clusters.LoadRESTConfig (--kubeconfig, $KUBECONFIG,
// ~/.kube/config, the local cluster's), whose failure is a usage error
// (exit 2).
func loadRESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	cfg, err := clusters.LoadRESTConfig(kubeconfig, kubeContext)
	switch {
	case err != nil && kubeconfig != "":
		return nil, usageError{fmt.Errorf("--kubeconfig: %w", err)}
	case err != nil:
		return nil, usageError{err}
	}
	return cfg, nil
}
