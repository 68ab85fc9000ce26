package suites

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// lookTimeout bounds one look at Kafka: a look that hits a paused or
// partitioned broker must not hold up the timeline for long.
const lookTimeout = 2 * time.Second

// watchTimeline starts a story's event timeline: Kafka (topic's leaders
// and ISRs, broker fencing, the active controller) looked at every 0.5 s
// with a client of its own, and the namespace's pods and the nodes from
// the API's watch. stop ends it and returns what it saw; it may be called
// again (a DeferCleanup ends a story that failed half-way).
func watchTimeline(ctx context.Context, e *env, topic string) (stop func() timeline.Timeline, err error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.bootstrap...)}, e.kgoOpts...)...)
	if err != nil {
		return nil, err
	}
	adm := kafkaadmin.New(cl)
	rec := timeline.Start(ctx, timeline.Config{
		Look: func(ctx context.Context) (kafkaadmin.State, error) {
			ctx, cancel := context.WithTimeout(ctx, lookTimeout)
			defer cancel()
			return adm.State(ctx, topic)
		},
		Client:    e.cs,
		Namespace: e.namespace,
	})
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
