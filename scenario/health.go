package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/zookeeper"
)

// ensembleTimeout bounds one look at the ZooKeeper ensemble: a dead pod's
// IP may never refuse the connection.
const ensembleTimeout = 3 * time.Second

// Poll calls look every interval, at once first, until it returns nil,
// for up to timeout. Each look runs on ctx, not on the poll's deadline, so
// one begun near the end is not cut short. When the wait ends without
// success it returns what, and what the last look saw.
func Poll(ctx context.Context, interval, timeout time.Duration, what string, look func(ctx context.Context) error) error {
	start := time.Now()
	last := errors.New("not looked at yet")
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(context.Context) (bool, error) {
		last = look(ctx)
		return last == nil, nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("scenario: %s: stopped after %s (%w); last seen: %w", what, time.Since(start).Round(time.Second), context.Cause(ctx), last)
	}
	return fmt.Errorf("scenario: %s: not within %s; last seen: %w", what, timeout, last)
}

// HealthError returns nil when the cluster is healthy with every broker in
// ids registered, or an error listing what is wrong.
func (e *Env) HealthError(ctx context.Context, ids []int32) error {
	return e.WithKafka(func(cl *kafkaadmin.Client) error {
		opts := []kafkaadmin.HealthOption{kafkaadmin.WithBrokers(ids...)}
		if e.ZooKeeperConnect != "" {
			opts = append(opts, kafkaadmin.WithZooKeeperMode())
		}
		h, err := cl.CheckHealth(ctx, opts...)
		if err != nil {
			return err
		}
		if p := append(h.Problems(), e.ensembleProblems(ctx)...); len(p) > 0 {
			return fmt.Errorf("%s", strings.Join(p, "; "))
		}
		return nil
	})
}

// WaitHealthy waits up to HealthTimeout for health and returns, instead of
// failing, what was last observed when it never came.
func (e *Env) WaitHealthy(ctx context.Context, ids []int32) error {
	return Poll(ctx, HealthPoll, HealthTimeout, "Kafka health", func(ctx context.Context) error { return e.HealthError(ctx, ids) })
}

// MetadataHealth says what health asks of the metadata's keepers.
func (e *Env) MetadataHealth() string {
	if e.ZooKeeperConnect != "" {
		return "a controller broker, the ZooKeeper ensemble led and in sync"
	}
	return "the quorum caught up"
}

// Ensemble looks at the ZooKeeper ensemble that e's brokers connect to,
// from this process: only where e can Dial the cluster's pods; false
// elsewhere, and in KRaft mode.
func (e *Env) Ensemble(ctx context.Context) (zookeeper.Ensemble, bool) {
	if e.ZooKeeperConnect == "" || e.Dial == nil {
		return zookeeper.Ensemble{}, false
	}
	var servers []zookeeper.Server
	for _, addr := range brokers.ZooKeeperServers(e.ZooKeeperConnect) {
		servers = append(servers, zookeeper.Server{Addr: addr})
	}
	ctx, cancel := context.WithTimeout(ctx, ensembleTimeout)
	defer cancel()
	// The cluster's names resolve through its hosts file only: a name
	// missing there (a pod being replaced) is a server that does not
	// answer, never a question to the host's DNS.
	return zookeeper.Check(ctx, servers, zookeeper.WithDialer(e.Dial)), true
}

// ensembleProblems are the ensemble's problems, each prefixed, for the
// health check of a cluster in ZooKeeper mode.
func (e *Env) ensembleProblems(ctx context.Context) []string {
	ens, ok := e.Ensemble(ctx)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range ens.Problems() {
		out = append(out, "ZooKeeper: "+p)
	}
	return out
}

// WaitPodsBack waits until each victim's pod is Ready (and, with newPod,
// a new pod); it returns what it last saw when that never happened.
func (e *Env) WaitPodsBack(ctx context.Context, victims []brokers.Server, newPod bool) error {
	return Poll(ctx, PodBackPoll, PodBackTimeout, "victims back as Ready pods", func(ctx context.Context) error {
		var waiting []string
		for _, v := range victims {
			p, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, v.Pod, metav1.GetOptions{})
			switch {
			case err != nil:
				waiting = append(waiting, fmt.Sprintf("%s: %v", v.Pod, err))
			case newPod && p.UID == v.PodUID:
				waiting = append(waiting, fmt.Sprintf("%s: still the old pod %s", v.Pod, p.UID))
			case !kube.PodReady(p):
				waiting = append(waiting, fmt.Sprintf("%s: %s on %q, not Ready", v.Pod, p.Status.Phase, p.Spec.NodeName))
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("%s", strings.Join(waiting, "; "))
		}
		return nil
	})
}

// AuditProblems runs brokers.Audit on the snapshot.
func (e *Env) AuditProblems(ctx context.Context, snap []brokers.Server) []string {
	var fs []brokers.Finding
	err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		fs, err = brokers.Audit(ctx, e.Kube, cl, e.Namespace, snap)
		return err
	})
	if err != nil {
		return []string{err.Error()}
	}
	var p []string
	for _, f := range fs {
		p = append(p, f.String())
	}
	return p
}

// clusterID reads Kafka's cluster ID.
func (e *Env) clusterID(ctx context.Context) (string, error) {
	var id string
	err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		id, err = cl.ClusterID(ctx)
		return err
	})
	return id, err
}
