package timeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// DefaultPoll is how often Kafka is looked at.
const DefaultPoll = 500 * time.Millisecond

// Config says what to watch.
type Config struct {
	// Look returns one look at Kafka (kafkaadmin.Client.State, with the
	// topic bound); nil: no Kafka lane.
	Look func(ctx context.Context) (kafkaadmin.State, error)
	// Poll is the time between looks; default DefaultPoll. A look that
	// takes longer delays the next.
	Poll time.Duration
	// Client and Namespace: the pods of Namespace and every node are
	// watched; a nil Client: no Kubernetes lane.
	Client    kubernetes.Interface
	Namespace string
}

// Recorder watches until Stop.
type Recorder struct {
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu     sync.Mutex
	events []Event
	states []kafkaadmin.State
}

// syncTimeout bounds the first list of pods and nodes: an identity that may
// not list or watch them would otherwise wait forever.
const syncTimeout = time.Minute

// Start begins watching; the Kubernetes lane starts from the state the
// watch first lists (no events for it). It fails when that list does not
// come within syncTimeout.
func Start(ctx context.Context, cfg Config) (*Recorder, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &Recorder{cancel: cancel}
	if cfg.Look != nil {
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			r.pollKafka(ctx, cfg.Look, cmp.Or(cfg.Poll, DefaultPoll))
		}()
	}
	if cfg.Client != nil {
		if err := r.watchKube(ctx, cfg.Client, cfg.Namespace); err != nil {
			r.Stop()
			return nil, err
		}
	}
	return r, nil
}

func (r *Recorder) pollKafka(ctx context.Context, look func(context.Context) (kafkaadmin.State, error), every time.Duration) {
	var prev kafkaadmin.State
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if s, err := look(ctx); err == nil {
			r.mu.Lock()
			if len(r.states) > 0 {
				r.events = append(r.events, KafkaEvents(prev, s)...)
			}
			r.states = append(r.states, s)
			r.mu.Unlock()
			prev = merge(prev, s)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// merge keeps prev's parts that cur does not know, so a change is measured
// against the last look that knew the part.
func merge(prev, cur kafkaadmin.State) kafkaadmin.State {
	if cur.Partitions == nil {
		cur.Partitions = prev.Partitions
	}
	if cur.Brokers == nil {
		cur.Brokers = prev.Brokers
	}
	if !cur.ControllerKnown {
		cur.Controller, cur.ControllerEpoch, cur.ControllerKnown = prev.Controller, prev.ControllerEpoch, prev.ControllerKnown
	}
	return cur
}

func (r *Recorder) watchKube(ctx context.Context, cs kubernetes.Interface, ns string) error {
	pods := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	nodes := informers.NewSharedInformerFactory(cs, 0)
	record := func(evs []Event) {
		if len(evs) > 0 {
			r.mu.Lock()
			r.events = append(r.events, evs...)
			r.mu.Unlock()
		}
	}
	_, _ = pods.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) {
			if !initial { // the initial list is the starting state, not events
				record(PodEvents(time.Now(), nil, o.(*corev1.Pod)))
			}
		},
		UpdateFunc: func(o, n any) { record(PodEvents(time.Now(), o.(*corev1.Pod), n.(*corev1.Pod))) },
		DeleteFunc: func(o any) {
			if p, ok := o.(*corev1.Pod); ok {
				record(PodEvents(time.Now(), p, nil))
			} else if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				if p, ok := t.Obj.(*corev1.Pod); ok {
					record(PodEvents(time.Now(), p, nil))
				}
			}
		},
	})
	_, _ = nodes.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(o, n any) { record(NodeEvents(time.Now(), o.(*corev1.Node), n.(*corev1.Node))) },
	})
	pods.Start(ctx.Done())
	nodes.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	synced := true
	for _, ok := range pods.WaitForCacheSync(syncCtx.Done()) {
		synced = synced && ok
	}
	for _, ok := range nodes.WaitForCacheSync(syncCtx.Done()) {
		synced = synced && ok
	}
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		<-ctx.Done()
		pods.Shutdown()
		nodes.Shutdown()
	}()
	if !synced {
		return fmt.Errorf("timeline: the pods of %q and the nodes were not listed within %s: may this identity list and watch them?", ns, syncTimeout)
	}
	return nil
}

// Timeline is what a Recorder saw.
type Timeline struct {
	Events []Event
	// States are the Kafka looks, in order (for milestones).
	States []kafkaadmin.State
}

// Stop ends the watch and returns what it saw, events in time order.
func (r *Recorder) Stop() Timeline {
	r.cancel()
	r.done.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := slices.Clone(r.events)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
	return Timeline{Events: evs, States: slices.Clone(r.states)}
}

// FirstAfter returns the first look at or after since whose state meets
// cond, counted from since, and whether there was one.
func (t Timeline) FirstAfter(since time.Time, cond func(kafkaadmin.State) bool) (time.Duration, bool) {
	for _, s := range t.States {
		if !s.At.Before(since) && cond(s) {
			return s.At.Sub(since), true
		}
	}
	return 0, false
}
