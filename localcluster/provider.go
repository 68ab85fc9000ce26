package localcluster

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/clusters"
)

// Provider is c as a target's cluster (clusters.Provider).
type Provider struct {
	*Cluster
	// Keep leaves the cluster running after Down (a state dir the user
	// gave, or kafkachaos cluster up's); else Down stops it and deletes
	// its state dir.
	Keep bool
	// AsItIs uses the running cluster without starting any part of it
	// (a dry run): Up fails when a daemon is not running.
	AsItIs bool
}

var _ clusters.Provider = Provider{}

// Name says where the cluster's state is.
func (p Provider) Name() string { return "the embedded local cluster in " + p.dir }

// Up brings the cluster up (idempotent on a running one), or with AsItIs
// only checks that it runs, and returns its admin's REST config.
func (p Provider) Up(ctx context.Context) (*rest.Config, error) {
	if p.AsItIs {
		for _, st := range p.Status() {
			if !st.Running {
				return nil, fmt.Errorf("localcluster: the cluster in %s is used as it is, and its %s is not running: bring it up with kafkachaos cluster up --state-dir %s", p.dir, st.Name, p.dir)
			}
		}
	} else if err := p.Cluster.Up(ctx); err != nil {
		return nil, err
	}
	return p.RESTConfig()
}

// Down stops the cluster and deletes its state, unless Keep or AsItIs.
func (p Provider) Down(ctx context.Context) error {
	if p.Keep || p.AsItIs {
		return nil
	}
	return p.Cluster.Down(ctx, true)
}
