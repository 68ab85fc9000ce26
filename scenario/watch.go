package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// lookTimeout bounds one look at Kafka: a look that hits a paused or
// partitioned broker must not hold up the timeline for long.
const lookTimeout = 2 * time.Second

// watchTimeline starts a story's event timeline: Kafka (topic's leaders
// and ISRs, broker fencing, the active controller) looked at every 0.5 s
// with a client of its own, and the namespace's pods and the nodes from
// the API's watch. stop ends it and returns what it saw; it may be called
// again (a cleanup ends a story that failed half-way).
func (e *Env) watchTimeline(ctx context.Context, topic string) (stop func() timeline.Timeline, err error) {
	cl, err := e.KafkaClient()
	if err != nil {
		return nil, err
	}
	adm := kafkaadmin.New(cl)
	rec, err := timeline.Start(ctx, timeline.Config{
		Look: func(ctx context.Context) (kafkaadmin.State, error) {
			ctx, cancel := context.WithTimeout(ctx, lookTimeout)
			defer cancel()
			return adm.State(ctx, topic)
		},
		Client:    e.Kube,
		Namespace: e.Namespace,
	})
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("scenario: timeline: %w", err)
	}
	return sync.OnceValue(func() timeline.Timeline {
		tl := rec.Stop()
		cl.Close()
		return tl
	}), nil
}

// milestone is how long after since the timeline's looks first met cond,
// or Never.
func milestone(tl timeline.Timeline, since time.Time, cond func(kafkaadmin.State) bool) report.Duration {
	if d, ok := tl.FirstAfter(since, cond); ok {
		return report.Reached(d)
	}
	return report.Never()
}

// SampleResources starts measuring what the namespace's pods use (CPU
// time, peak working set) from the kubelets' stats summary, while the load
// runs: with LocalKubelets from each node agent's kubelet API directly
// (the API server's node proxy refuses loopback node addresses), elsewhere
// through the node proxy. It never fails a story: an identity that may not
// read the summary gets a usage that says so. stop may be called again.
func (e *Env) SampleResources(ctx context.Context) (stop func() resources.Usage) {
	cfg := resources.Config{Client: e.Kube, Namespace: e.Namespace}
	how := "the node proxy"
	if e.LocalKubelets {
		cfg.Summary, how = resources.LocalKubeletSummary(e.Kube), "each node agent's kubelet API"
	}
	e.By(fmt.Sprintf("measuring the CPU and memory of the pods of %s (the kubelets' stats summary through %s, every %s)", e.Namespace, how, resources.DefaultEvery))
	return resources.Start(ctx, cfg).Stop
}
