package manifests

import (
	"context"
	"embed"
	"fmt"

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

// Apply applies the layout's manifest (see kube.Apply).
func (l Layout) Apply(ctx context.Context, cfg *rest.Config) ([]string, error) {
	raw, err := l.Read()
	if err != nil {
		return nil, err
	}
	return kube.Apply(ctx, cfg, raw)
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
