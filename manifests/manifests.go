package manifests

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/kube"
)

//go:embed kafka/kafka.yaml kafka/separate-controllers/kafka.yaml kafka/zookeeper/kafka.yaml kafka/dynamic-quorum/kafka.yaml
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
	Pods        int    // pods the layout runs (brokers and controllers, or ZooKeeper)
	// ZooKeeper is the layout's ZooKeeper ensemble (its StatefulSet and
	// headless service name the pods), for a layout in ZooKeeper mode;
	// the zero value for KRaft.
	ZooKeeper Ensemble
	// MinKafkaVersion is the oldest Kafka the layout runs; "" for any.
	MinKafkaVersion string

	fileNamespace string // the namespace the file names; In moves it
	kafkaVersion  string // the apache/kafka tag to run; "" for the file's
}

// KafkaImage is the official Kafka image, which every layout runs.
const KafkaImage = "apache/kafka"

// KafkaTag reports whether image is the KafkaImage (also as
// docker.io/apache/kafka, with or without a digest) and returns its tag, ""
// for none.
func KafkaTag(image string) (tag string, ok bool) {
	repo, tag := SplitImage(image)
	return tag, repo == KafkaImage || repo == "docker.io/"+KafkaImage
}

// SplitImage returns an image's repository and tag ("" if none); a digest
// is dropped.
func SplitImage(image string) (repo, tag string) {
	repo = image
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag
}

// WithKafkaVersion returns the layout running Kafka version (an
// apache/kafka tag) instead of the file's: Objects retags every container
// of the KafkaImage. "" keeps the file's.
func (l Layout) WithKafkaVersion(version string) Layout {
	l.kafkaVersion = version
	return l
}

// KafkaVersion returns the Kafka version the layout runs: the one
// WithKafkaVersion set, or the version the tag of the file's first
// KafkaImage container names (kafkadist.VersionOfTag).
func (l Layout) KafkaVersion() (string, error) {
	if l.kafkaVersion != "" {
		return l.kafkaVersion, nil
	}
	objs, err := l.Objects()
	if err != nil {
		return "", err
	}
	if vs := KafkaVersions(objs); len(vs) > 0 {
		return vs[0], nil
	}
	return "", fmt.Errorf("manifests: layout %s runs no %s container", l.Name, KafkaImage)
}

// KafkaVersions returns the Kafka version of every KafkaImage container of
// objs' workloads (kafkadist.VersionOfTag of its tag), in order, each once.
func KafkaVersions(objs []*unstructured.Unstructured) []string {
	var vs []string
	for _, o := range objs {
		for _, c := range containers(o) {
			if tag, ok := KafkaTag(c["image"].(string)); ok && !slices.Contains(vs, kafkadist.VersionOfTag(tag)) {
				vs = append(vs, kafkadist.VersionOfTag(tag))
			}
		}
	}
	return vs
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
		addrs = append(addrs, fmt.Sprintf("%s:%d", l.PodFQDN(fmt.Sprintf("%s-%d", l.StatefulSet, i)), BrokerPort))
	}
	return addrs
}

// PodFQDN is the cluster DNS name of the layout's pod, under its headless
// Service.
func (l Layout) PodFQDN(pod string) string {
	return fmt.Sprintf("%s.%s.%s.svc.cluster.local", pod, l.Service, l.Namespace)
}

// Layouts returns the Kafka layouts, the default (combined mode) first.
func Layouts() []Layout {
	return []Layout{
		{Name: "combined", File: "kafka/kafka.yaml", Namespace: "kafka", StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 3, fileNamespace: "kafka"},
		{Name: "separate-controllers", File: "kafka/separate-controllers/kafka.yaml", Namespace: "kafka-split", StatefulSet: "kafka-broker", Brokers: 3, Service: "kafka-headless", Pods: 6, fileNamespace: "kafka-split"},
		{Name: "zookeeper", File: "kafka/zookeeper/kafka.yaml", Namespace: "kafka-zk", StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 6, fileNamespace: "kafka-zk",
			ZooKeeper: Ensemble{StatefulSet: "zookeeper", Service: "zookeeper-headless", Servers: 3, FirstID: 10, ClientPort: 2181}},
		{Name: "dynamic-quorum", File: "kafka/dynamic-quorum/kafka.yaml", Namespace: "kafka-dyn", StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 3, fileNamespace: "kafka-dyn",
			MinKafkaVersion: "3.9.0"}, // KIP-853's dynamic quorums, and kafka-storage.sh's --initial-controllers
	}
}

// Ensemble is a layout's ZooKeeper ensemble: server N (from FirstID) runs
// in pod <StatefulSet>-<N-FirstID>, named through Service.
type Ensemble struct {
	StatefulSet string
	Service     string
	Servers     int
	FirstID     int // myid of pod 0
	ClientPort  int
}

// InUse reports whether the layout runs Kafka in ZooKeeper mode.
func (e Ensemble) InUse() bool { return e.Servers > 0 }

// CheckKafkaVersion says why the layout cannot run Kafka version, if it
// cannot: ZooKeeper mode ended with Kafka 4.
func (l Layout) CheckKafkaVersion(version string) error {
	if l.ZooKeeper.InUse() && kafkadist.CompareVersions(version, "4.0.0") >= 0 {
		return fmt.Errorf("manifests: layout %s runs Kafka in ZooKeeper mode, which Kafka 4 removed: it needs a 3.x version, not %s", l.Name, version)
	}
	if l.MinKafkaVersion != "" && kafkadist.CompareVersions(version, l.MinKafkaVersion) < 0 {
		return fmt.Errorf("manifests: layout %s needs Kafka %s or later, not %s", l.Name, l.MinKafkaVersion, version)
	}
	return nil
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
	if l.kafkaVersion != "" {
		for _, o := range objs {
			if err := retagKafka(o, l.kafkaVersion); err != nil {
				return nil, err
			}
		}
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
		if o.GetKind() == "ConfigMap" {
			if err := renameInData(o, "."+l.fileNamespace+".svc.", "."+l.Namespace+".svc."); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}

// renameInData replaces old with new in a ConfigMap's data: config files
// name their peers by full DNS name, which carries the namespace.
func renameInData(o *unstructured.Unstructured, old, new string) error {
	data, _, err := unstructured.NestedStringMap(o.Object, "data")
	if err != nil {
		return fmt.Errorf("manifests: ConfigMap %s: %w", o.GetName(), err)
	}
	for k, v := range data {
		data[k] = strings.ReplaceAll(v, old, new)
	}
	if len(data) == 0 {
		return nil
	}
	return unstructured.SetNestedStringMap(o.Object, data, "data")
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

// containers returns the pod template's containers and init containers of
// a workload object (none for other kinds), as maps that edits change.
func containers(o *unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	for _, field := range []string{"containers", "initContainers"} {
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", field)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				if _, ok := m["image"].(string); ok {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// retagKafka sets the tag of o's KafkaImage containers to version.
func retagKafka(o *unstructured.Unstructured, version string) error {
	for _, field := range []string{"containers", "initContainers"} {
		cs, found, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", field)
		if err != nil || !found {
			continue
		}
		for _, c := range cs {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			image, _ := m["image"].(string)
			if _, ok := KafkaTag(image); ok {
				m["image"] = KafkaImage + ":" + version
			}
		}
		if err := unstructured.SetNestedSlice(o.Object, cs, "spec", "template", "spec", field); err != nil {
			return fmt.Errorf("manifests: retag %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
