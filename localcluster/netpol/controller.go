package netpol

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	listersv1 "k8s.io/client-go/listers/core/v1"
	netlisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// applyRetry is how soon a failed Apply is tried again.
const applyRetry = time.Second

// Event reasons on a NetworkPolicy.
const (
	ReasonNotEnforced = "NotEnforced" // Warning: refused, with why
	ReasonEnforced    = "Enforced"    // Normal: its rules are in place
)

// Controller keeps the cluster's nftables table in step with its
// NetworkPolicies, pods and namespaces.
type Controller struct {
	cg    *Cgroups
	table *Table
	// broken is why nothing can be enforced on this host; every policy is
	// then refused with it.
	broken error

	pods     listersv1.PodLister
	ns       listersv1.NamespaceLister
	policies netlisters.NetworkPolicyLister
	recorder record.EventRecorder
	kick     chan struct{}

	applied *Ruleset // the rules in the kernel, after the last good Apply

	mu       sync.Mutex
	reported map[string]string // policy key -> last reason reported
}

// Start sets up the cluster's cgroups and table (the marking rule is in
// place before it returns, so it must run before any pod starts), then
// follows the API until ctx ends; the caller then removes the table and the
// cgroups with Purge, once the pods' processes are gone. If the host
// cannot enforce policies, Start still returns a controller, one that
// refuses every policy with an event that says why; Broken returns it.
func Start(ctx context.Context, cs kubernetes.Interface, stateDir string) (*Controller, error) {
	tag := Tag(stateDir)
	c := &Controller{kick: make(chan struct{}, 1), reported: map[string]string{}}
	if cg, err := OpenCgroups(tag); err != nil {
		c.broken = err
	} else if t, err := NewTable(tag, cg); err != nil {
		c.broken = err
	} else if err := t.Apply(Ruleset{}); err != nil {
		c.broken = err
	} else {
		c.cg, c.table = cg, t
	}

	f := informers.NewSharedInformerFactory(cs, 0)
	podInf, nsInf, polInf := f.Core().V1().Pods(), f.Core().V1().Namespaces(), f.Networking().V1().NetworkPolicies()
	c.pods, c.ns, c.policies = podInf.Lister(), nsInf.Lister(), polInf.Lister()
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.Kick() },
		UpdateFunc: func(any, any) { c.Kick() },
		DeleteFunc: func(any) { c.Kick() },
	}
	for _, inf := range []cache.SharedIndexInformer{podInf.Informer(), nsInf.Informer(), polInf.Informer()} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return nil, fmt.Errorf("netpol: %w", err)
		}
	}
	bc := record.NewBroadcaster(record.WithContext(ctx))
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	c.recorder = bc.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kafkachaos-netpol"})
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			bc.Shutdown()
			return nil, fmt.Errorf("netpol: %v informer did not sync", typ)
		}
	}
	go func() {
		defer bc.Shutdown()
		for {
			select {
			case <-ctx.Done():
				return // the agent purges the table once its pods are gone
			case <-c.kick:
				c.sync()
			}
		}
	}()
	c.Kick()
	return c, nil
}

// Broken returns why this host cannot enforce policies, or nil.
func (c *Controller) Broken() error { return c.broken }

// Cgroups returns the pods' cgroups, nil when Broken.
func (c *Controller) Cgroups() *Cgroups { return c.cg }

// Kick asks for the rules to be recomputed (a pod got its cgroup).
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// sync recomputes and applies the rules, and reports each policy's fate.
func (c *Controller) sync() {
	pols, err := c.policies.List(labels.Everything())
	if err != nil {
		return
	}
	policies := make([]networkingv1.NetworkPolicy, 0, len(pols))
	for _, p := range pols {
		policies = append(policies, *p)
	}
	sort.Slice(policies, func(i, j int) bool {
		return policies[i].Namespace+"/"+policies[i].Name < policies[j].Namespace+"/"+policies[j].Name
	})
	if c.broken != nil {
		for i := range policies {
			c.report(&policies[i], "this host cannot enforce NetworkPolicy: "+c.broken.Error())
		}
		return
	}
	rs, refused := Compile(c.podsNow(), c.nsLabels(), policies)
	why := map[string]string{}
	for _, r := range refused {
		why[r.Namespace+"/"+r.Name] = r.Reason
	}
	// Most changes (a pod's status) change no rule: the kernel keeps them.
	if c.applied == nil || !reflect.DeepEqual(*c.applied, rs) {
		if err := c.table.Apply(rs); err != nil {
			// The old rules stay in the kernel until an Apply succeeds: a
			// partition would outlive its policy. Say so, and try again.
			fmt.Fprintf(os.Stderr, "netpol: %v; retrying in %s\n", err, applyRetry)
			time.AfterFunc(applyRetry, c.Kick)
			for k := range policies {
				why[policies[k].Namespace+"/"+policies[k].Name] = err.Error()
			}
		} else {
			c.applied = &rs
		}
	}
	for i := range policies {
		c.report(&policies[i], why[policies[i].Namespace+"/"+policies[i].Name])
	}
}

// report records an event when a policy's fate changes: refused (why) or
// enforced (why == "").
func (c *Controller) report(pol *networkingv1.NetworkPolicy, why string) {
	k := pol.Namespace + "/" + pol.Name + "/" + string(pol.UID)
	c.mu.Lock()
	last, seen := c.reported[k]
	c.reported[k] = why
	c.mu.Unlock()
	if seen && last == why {
		return
	}
	if why != "" {
		c.recorder.Event(pol, corev1.EventTypeWarning, ReasonNotEnforced, why)
		return
	}
	c.recorder.Event(pol, corev1.EventTypeNormal, ReasonEnforced, "enforced by the local cluster's nftables rules")
}

// podsNow returns the running pods with their addresses and marks.
func (c *Controller) podsNow() []Pod {
	list, err := c.pods.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []Pod
	for _, p := range list {
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		mark, err := c.cg.Mark(string(p.UID))
		if err != nil {
			mark = 0
		}
		out = append(out, Pod{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, IP: ip, Mark: mark})
	}
	return out
}

func (c *Controller) nsLabels() map[string]map[string]string {
	list, err := c.ns.List(labels.Everything())
	if err != nil {
		return nil
	}
	out := make(map[string]map[string]string, len(list))
	for _, n := range list {
		out[n.Name] = n.Labels
	}
	return out
}

// Purge removes what a cluster left on the host after a crash: its table
// and its cgroups. The pods' processes must have been killed first.
func Purge(stateDir string) error {
	tag := Tag(stateDir)
	return errors.Join(Delete(tag), RemoveAll(tag))
}
