package localkafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Limits of the health checks.
const (
	healthPollInterval = 500 * time.Millisecond
	// healthCheckTimeout bounds one health check, so that one request to a
	// dead broker cannot use up all of WaitHealthy's time.
	healthCheckTimeout = 5 * time.Second
)

// Health checks the cluster once (see kafkaadmin.Client.CheckHealth), expecting every
// broker registered and answering, the controllers as the quorum's voters,
// and the cluster ID.
func (c *Cluster) Health(ctx context.Context) (kafkaadmin.Health, error) {
	cl, err := c.healthClient()
	if err != nil {
		return kafkaadmin.Health{}, err
	}
	var brokerIDs, voterIDs []int32
	for _, n := range c.Nodes() {
		if n.IsBroker() {
			brokerIDs = append(brokerIDs, n.ID)
		}
		if n.IsController() {
			voterIDs = append(voterIDs, n.ID)
		}
	}
	h, err := kafkaadmin.New(cl).CheckHealth(ctx, kafkaadmin.WithBrokers(brokerIDs...), kafkaadmin.WithVoters(voterIDs...), kafkaadmin.WithClusterID(c.cfg.clusterID))
	if err != nil {
		return h, fmt.Errorf("localkafka: %w", err)
	}
	return h, nil
}

func (c *Cluster) healthClient() (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("localkafka: cluster closed")
	}
	if c.client != nil {
		return c.client, nil
	}
	var seeds []string
	for _, n := range c.nodes {
		if n.BrokerAddr != "" {
			seeds = append(seeds, n.BrokerAddr)
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("localkafka: the cluster is not started")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("localkafka-health"),
		kgo.DialTimeout(2*time.Second),
		// Brokers that are starting refuse connections: retry soon, not
		// with kgo's backoff of up to 2.5s, so a check sees them up at once.
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	if err != nil {
		return nil, fmt.Errorf("localkafka: health client: %w", err)
	}
	c.client = cl
	return cl, nil
}

// WaitHealthy polls Health until the cluster is healthy: every broker
// registered and serving requests sent to it alone (so a broker killed and
// restarted just now does not pass on the strength of the metadata its
// previous incarnation left), every partition with a leader and a full ISR,
// and the KRaft quorum with a leader and every voter caught up. It fails at
// once if a node is not running (stopped, killed, or exited by itself, with
// the end of its log), and when ctx ends it says what it observed last.
//
// A controller-only node (WithSeparateControllers) is judged by the quorum
// alone: killed in the last 2 seconds, it can still count as caught up.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	if _, err := c.healthClient(); err != nil {
		return err
	}
	last := "no health check finished"
	err := wait.PollUntilContextCancel(ctx, healthPollInterval, true, func(ctx context.Context) (bool, error) {
		if err := c.checkRunning(); err != nil {
			return false, err
		}
		checkCtx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
		c.cancelOnExit(checkCtx, cancel)
		h, err := c.Health(checkCtx)
		cancel()
		if err == nil && h.Healthy() {
			return true, nil
		}
		if ctx.Err() == nil {
			// Failed requests, a timed-out check's too, are in h.
			last = h.String()
		}
		return false, nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("localkafka: cluster not healthy (%w); last observed: %s", err, last)
	}
	return err
}

// cancelOnExit calls cancel when a running node exits before ctx ends, so
// that a health check in flight does not hide a crash.
func (c *Cluster) cancelOnExit(ctx context.Context, cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if p := n.proc; p != nil {
			go func() {
				select {
				case <-p.done:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
	}
}

// checkRunning fails if any node is not running.
func (c *Cluster) checkRunning() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.closed {
		return errors.New("localkafka: the cluster is not running (not started, or closed)")
	}
	for _, n := range c.nodes {
		switch {
		case n.proc == nil:
			return fmt.Errorf("localkafka: node %d is not running (stopped or killed); Restart it first", n.ID)
		case n.proc.exited():
			return fmt.Errorf("localkafka: node %d exited by itself: %v\n%s", n.ID, n.proc.exitErr(), tailOrErr(n.logPath(), failureLogLines))
		}
	}
	return nil
}
