package manifests

import (
	"context"
	"embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

//go:embed kafka/kafka.yaml kafka/separate-controllers/kafka.yaml
//go:embed operators/strimzi/kafka.yaml operators/koperator/kafkacluster.yaml
var files embed.FS

// Layout is one variant of manifests/kafka.
type Layout struct {
	Name        string // as given to --kafka
	File        string // path inside this directory
	Namespace   string
	StatefulSet string // the brokers' StatefulSet; its pods are <StatefulSet>-N
	Brokers     int    // replicas of StatefulSet
	Service     string // the headless service that names the pods
	Pods        int    // pods the layout runs (brokers and controllers)

	fileNamespace string // the namespace the file names; In moves it
}

// In returns the layout deployed in namespace ns instead of its own: Apply
// renames the file's Namespace and moves every object of that namespace
// (all of the file's namespaced objects) to ns. The
// layouts' manifests name their peers through $(POD_NAMESPACE), so a copy
// in another namespace is a cluster of its own.
func (l Layout) In(ns string) Layout {
	if l.fileNamespace == "" {
		l.fileNamespace = l.Namespace
	}
	l.Namespace = ns
	return l
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
		{Name: "combined", File: "kafka/kafka.yaml", Namespace: "kafka", StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 3, fileNamespace: "kafka"},
		{Name: "separate-controllers", File: "kafka/separate-controllers/kafka.yaml", Namespace: "kafka-split", StatefulSet: "kafka-broker", Brokers: 3, Service: "kafka-headless", Pods: 6, fileNamespace: "kafka-split"},
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

// Apply applies the layout's manifest (see kube.Apply), in l.Namespace.
func (l Layout) Apply(ctx context.Context, cfg *rest.Config) ([]string, error) {
	objs, err := l.Objects()
	if err != nil {
		return nil, err
	}
	return kube.ApplyObjects(ctx, cfg, objs)
}

// Objects returns the layout's objects, moved to l.Namespace (see In).
func (l Layout) Objects() ([]*unstructured.Unstructured, error) {
	raw, err := l.Read()
	if err != nil {
		return nil, err
	}
	objs, err := kube.Decode(raw)
	if err != nil {
		return nil, err
	}
	if l.fileNamespace == "" || l.fileNamespace == l.Namespace {
		return objs, nil
	}
	for _, o := range objs {
		switch {
		case o.GetKind() == "Namespace" && o.GetName() == l.fileNamespace:
			o.SetName(l.Namespace)
		case o.GetNamespace() == l.fileNamespace:
			o.SetNamespace(l.Namespace)
		}
	}
	return objs, nil
}

// ReadyPods counts the layout's Ready pods (see kube.ReadyPods).
func (l Layout) ReadyPods(ctx context.Context, cs kubernetes.Interface) (string, int, error) {
	return kube.ReadyPods(ctx, cs, l.Namespace, l.Pods)
}

// WaitReady waits until the layout's pods are Ready (at least l.Pods), as
// kube.WaitPodsReady does; its error names the layout.
func (l Layout) WaitReady(ctx context.Context, cs kubernetes.Interface, w kube.Wait) error {
	if err := kube.WaitPodsReady(ctx, cs, l.Namespace, l.Pods, w); err != nil {
		return fmt.Errorf("layout %s: %w", l.Name, err)
	}
	return nil
}
