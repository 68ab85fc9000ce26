package suites

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/resources"
)

// sampleResources starts measuring what the namespace's pods use (CPU
// time, peak working set) from the kubelets' stats summary, while the load
// runs. It never fails a story: an identity that may not get nodes/proxy
// gets a usage that says so. stop may be called again.
func sampleResources(ctx context.Context, e *env) (stop func() resources.Usage) {
	By(fmt.Sprintf("measuring the CPU and memory of the pods of %s (the kubelets' stats summary, every %s)", e.namespace, resources.DefaultEvery))
	s := resources.Start(ctx, resources.Config{Client: e.cs, Namespace: e.namespace})
	return s.Stop
}
