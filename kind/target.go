package kind

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/clusters"
)

// Target is p as a target's cluster (clusters.Provider): Up creates the
// kind cluster with Kafka on it, Down deletes it.
func (p *Provider) Target() clusters.Provider { return target{p} }

type target struct{ p *Provider }

func (t target) Name() string { return "the kind cluster " + t.p.name }

func (t target) Up(ctx context.Context) (*rest.Config, error) {
	kubeconfig, err := t.p.Up(ctx)
	if err != nil {
		return nil, err
	}
	return clusters.LoadRESTConfig(kubeconfig, "")
}

func (t target) Down(ctx context.Context) error { return t.p.Down(ctx) }
