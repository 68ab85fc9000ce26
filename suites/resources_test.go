package suites

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/resources"
)

// sampleResources starts measuring what the namespace's pods use (CPU
// time, peak working set) from the kubelets' stats summary, while the load
// runs: on the local cluster from each node agent's kubelet API directly
// (the API server's node proxy refuses loopback node addresses), elsewhere
// through the node proxy. It never fails a story: an identity that may not
// read the summary gets a usage that says so. stop may be called again.
func sampleResources(ctx context.Context, e *env) (stop func() resources.Usage) {
	cfg := resources.Config{Client: e.cs, Namespace: e.namespace}
	how := "the node proxy"
	if e.local != nil {
		cfg.Summary, how = resources.LocalKubeletSummary(e.cs), "each node agent's kubelet API"
	}
	By(fmt.Sprintf("measuring the CPU and memory of the pods of %s (the kubelets' stats summary through %s, every %s)", e.namespace, how, resources.DefaultEvery))
	return resources.Start(ctx, cfg).Stop
}
