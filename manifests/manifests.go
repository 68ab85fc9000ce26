package manifests

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

//go:embed kafka/kafka.yaml kafka/separate-controllers/kafka.yaml
//go:embed operators/strimzi/kafka.yaml operators/koperator/kafkacluster.yaml
var files embed.FS

// FieldManager is the server-side apply field manager of everything this
// package applies.
const FieldManager = "kafkachaos"

// Layout is one variant of manifests/kafka.
type Layout struct {
	Name        string // as given to --kafka
	File        string // path inside this directory
	Namespace   string
	StatefulSet string // the brokers' StatefulSet; its pods are <StatefulSet>-N
	Brokers     int    // replicas of StatefulSet
	Service     string // the headless service that names the pods
	Pods        int    // pods the layout runs (brokers and controllers)
}

// BrokerPort is the brokers' client listener in every layout.
const BrokerPort = 9092

// Bootstrap returns the brokers' cluster DNS names with the client port.
func (l Layout) Bootstrap() []string {
	var addrs []string
	for i := range l.Brokers {
		addrs = append(addrs, fmt.Sprintf("%s-%d.%s.%s.svc.cluster.local:%d", l.StatefulSet, i, l.Service, l.Namespace, BrokerPort))
	}
	return addrs
}

// Layouts returns the Kafka layouts, the default (combined mode) first.
func Layouts() []Layout {
	return []Layout{
		{Name: "combined", File: "kafka/kafka.yaml", Namespace: "kafka", StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 3},
		{Name: "separate-controllers", File: "kafka/separate-controllers/kafka.yaml", Namespace: "kafka-split", StatefulSet: "kafka-broker", Brokers: 3, Service: "kafka-headless", Pods: 6},
	}
}

// LayoutNamed returns the layout called name.
func LayoutNamed(name string) (Layout, error) {
	var names []string
	for _, l := range Layouts() {
		if l.Name == name {
			return l, nil
		}
		names = append(names, l.Name)
	}
	return Layout{}, fmt.Errorf("manifests: no Kafka layout %q (have %v)", name, names)
}

// Read returns the embedded file's YAML.
func (l Layout) Read() ([]byte, error) { return readFile(l.File) }

// readFile returns an embedded file.
func readFile(path string) ([]byte, error) {
	raw, err := files.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	return raw, nil
}

// Apply applies the layout's manifest (see Apply).
func (l Layout) Apply(ctx context.Context, cfg *rest.Config) ([]string, error) {
	raw, err := l.Read()
	if err != nil {
		return nil, err
	}
	return Apply(ctx, cfg, raw)
}

// ReadyPods counts the layout's Ready pods. It returns a description of
// what it saw (name, phase, readiness of each pod) for wait messages.
func (l Layout) ReadyPods(ctx context.Context, cs kubernetes.Interface) (string, int, error) {
	pods, err := cs.CoreV1().Pods(l.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("manifests: list pods in %s: %w", l.Namespace, err)
	}
	var b bytes.Buffer
	ready := 0
	for _, p := range pods.Items {
		r := PodReady(&p)
		if r {
			ready++
		}
		fmt.Fprintf(&b, "%s:%s/ready=%t ", p.Name, p.Status.Phase, r)
	}
	fmt.Fprintf(&b, "(%d of %d Ready)", ready, l.Pods)
	return b.String(), ready, nil
}

// PodReady reports the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func Decode(raw []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("manifests: decode document %d: %w", len(objs)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("manifests: document %d lacks apiVersion, kind or metadata.name", len(objs)+1)
		}
		objs = append(objs, u)
	}
}

// Apply applies every object of raw with server-side apply, Namespaces
// first, and returns "kind/namespace/name" of each. Applying twice changes
// nothing the second time.
func Apply(ctx context.Context, cfg *rest.Config, raw []byte) ([]string, error) {
	objs, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return boolRank(b.GetKind() == "Namespace") - boolRank(a.GetKind() == "Namespace")
	})
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	var applied []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return applied, fmt.Errorf("manifests: %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			ns := o.GetNamespace()
			if ns == "" {
				return applied, fmt.Errorf("manifests: %s %s has no namespace", gvk.Kind, o.GetName())
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return applied, fmt.Errorf("manifests: apply %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		applied = append(applied, fmt.Sprintf("%s/%s/%s", gvk.Kind, o.GetNamespace(), o.GetName()))
	}
	return applied, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Wait is how WaitReady waits: for how long, how often it looks, and how
// often it says what it sees (through Progress, if set).
type Wait struct {
	Timeout       time.Duration
	Poll          time.Duration
	ProgressEvery time.Duration
	Progress      func(seen string)
}

// ErrNotReady is WaitReady's error when the timeout passed first.
var ErrNotReady = errors.New("manifests: pods not Ready in time")

// WaitReady polls until the layout's pods are Ready (at least l.Pods). On
// timeout it returns an error wrapping ErrNotReady, and if ctx ends first
// one wrapping ctx's error; both say what was seen last.
func (l Layout) WaitReady(ctx context.Context, cs kubernetes.Interface, w Wait) error {
	wctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	tick := time.NewTicker(w.Poll)
	defer tick.Stop()
	said, seen := time.Now(), ""
	for {
		s, ready, err := l.ReadyPods(wctx, cs)
		if err == nil && ready >= l.Pods {
			return nil
		}
		seen = s
		if err != nil {
			seen = err.Error()
		}
		if w.Progress != nil && time.Since(said) >= w.ProgressEvery {
			w.Progress(seen)
			said = time.Now()
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("stopped waiting for %s's pods: %w; last seen: %s", l.Name, ctx.Err(), seen)
			}
			return fmt.Errorf("%w: %s after %s; last seen: %s", ErrNotReady, l.Name, w.Timeout, seen)
		case <-tick.C:
		}
	}
}
