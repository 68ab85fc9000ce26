package resources

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// DefaultEvery is the time between two looks. CPU time is cumulative, so
// it only sets how finely a peak of memory is seen, and what a look costs
// the kubelets.
const DefaultEvery = 2 * time.Second

// lookTimeout bounds one node's summary.
const lookTimeout = 5 * time.Second

// Config says whose use to measure.
type Config struct {
	Client    kubernetes.Interface
	Namespace string
	// Every is the time between looks; default DefaultEvery.
	Every time.Duration
	// Summary reads a node's summary; default: the API server's node
	// proxy (NodeProxySummary).
	Summary SummaryFunc
}

// Sampler looks at the pods' use until Stop.
type Sampler struct {
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu      sync.Mutex
	from    time.Time
	last    time.Time // the last look that saw the pods
	acc     *accumulator
	problem string

	stop func() Usage
}

// Start takes the window's first look and goes on looking every
// cfg.Every.
func Start(ctx context.Context, cfg Config) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	from := time.Now()
	s := &Sampler{cancel: cancel, from: from, last: from, acc: newAccumulator(from)}
	s.stop = sync.OnceValue(s.end)
	summary := cfg.Summary
	if summary == nil {
		summary = NodeProxySummary(cfg.Client)
	}
	s.look(ctx, cfg, summary)
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(cmp.Or(cfg.Every, DefaultEvery))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.look(ctx, cfg, summary)
			}
		}
	}()
	return s
}

// look reads the summary of every node that runs one of the namespace's
// pods, and adds that namespace's pods. The first failure is kept as the
// usage's problem.
func (s *Sampler) look(ctx context.Context, cfg Config, summary SummaryFunc) {
	pods, err := cfg.Client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.fail(fmt.Errorf("listing the pods of %s: %w", cfg.Namespace, err))
		}
		return
	}
	var nodes []string
	for _, p := range pods.Items {
		if n := p.Spec.NodeName; n != "" && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	var seen []statsv1alpha1.PodStats
	for _, n := range nodes {
		lctx, cancel := context.WithTimeout(ctx, lookTimeout)
		sum, err := summary(lctx, n)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.fail(err)
			}
			continue
		}
		for _, ps := range sum.Pods {
			if ps.PodRef.Namespace == cfg.Namespace {
				seen = append(seen, ps)
			}
		}
	}
	if ctx.Err() != nil {
		return // Stop's cancel, not the cluster's failure
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acc.add(seen)
	s.last = time.Now()
}

func (s *Sampler) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.problem == "" {
		s.problem = err.Error()
	}
}

// Stop ends the looks and returns the window's use. It may be called more
// than once; later calls return the same window's use.
func (s *Sampler) Stop() Usage { return s.stop() }

func (s *Sampler) end() Usage {
	s.cancel()
	s.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	// The window ends at the last look: CPU time after it was not seen.
	return Usage{From: s.from, To: s.last, Pods: s.acc.usage(), Problem: s.problem}
}
