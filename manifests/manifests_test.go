package manifests

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/kube"
)

func TestLayoutsDecode(t *testing.T) {
	for _, l := range Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			raw, err := l.Read()
			if err != nil {
				t.Fatal(err)
			}
			objs, err := kube.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				if o.GetKind() != "Namespace" && o.GetNamespace() != l.Namespace {
					t.Errorf("%s %s is in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), l.Namespace)
				}
				if o.GetKind() == "Namespace" && o.GetLabels()["kafkachaos.io/allow-disruption"] != "true" {
					t.Errorf("namespace %s does not opt in to disruption", o.GetName())
				}
			}
			for _, k := range []string{"Namespace", "Service", "PodDisruptionBudget", "StatefulSet"} {
				if kinds[k] == 0 {
					t.Errorf("no %s in %s (kinds: %v)", k, l.File, kinds)
				}
			}
			sts := 0
			for _, o := range objs {
				if o.GetKind() == "StatefulSet" && o.GetName() == l.StatefulSet {
					sts++
				}
			}
			if sts != 1 {
				t.Errorf("StatefulSet %s not found in %s", l.StatefulSet, l.File)
			}
		})
	}
}

func TestLayoutNamed(t *testing.T) {
	if _, err := LayoutNamed("combined"); err != nil {
		t.Error(err)
	}
	if _, err := LayoutNamed("zookeeper-on-kafka-4"); err == nil {
		t.Error("want an error for an unknown layout")
	}
}

// A layout moved to another namespace has every object there, and its own
// Namespace renamed, so two copies are two clusters.
func TestLayoutIn(t *testing.T) {
	for _, l := range Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			moved := l.In("kafka-copy")
			objs, err := moved.Objects()
			if err != nil {
				t.Fatal(err)
			}
			namespaces := 0
			for _, o := range objs {
				switch {
				case o.GetKind() == "Namespace":
					namespaces++
					if o.GetName() != "kafka-copy" {
						t.Errorf("Namespace %s not renamed", o.GetName())
					}
				case o.GetNamespace() != "kafka-copy":
					t.Errorf("%s %s is in %q, want kafka-copy", o.GetKind(), o.GetName(), o.GetNamespace())
				}
				// Config files name peers by full DNS name: those move too.
				if data, _, _ := unstructured.NestedStringMap(o.Object, "data"); o.GetKind() == "ConfigMap" {
					for k, v := range data {
						if strings.Contains(v, "."+l.Namespace+".svc.") {
							t.Errorf("ConfigMap %s, %s still names namespace %s:\n%s", o.GetName(), k, l.Namespace, v)
						}
						if l.Name == "dynamic-quorum" && !strings.Contains(v, ".kafka-copy.svc.cluster.local:9093") {
							t.Errorf("ConfigMap %s, %s names no peer in kafka-copy:\n%s", o.GetName(), k, v)
						}
					}
				}
			}
			if namespaces != 1 {
				t.Errorf("%d Namespaces, want 1", namespaces)
			}
			if got := moved.Bootstrap()[0]; got != l.StatefulSet+"-0."+l.Service+".kafka-copy.svc.cluster.local:9092" {
				t.Errorf("bootstrap %s", got)
			}
			if again := moved.In("kafka-other"); again.fileNamespace != l.Namespace {
				t.Errorf("a second move lost the file's namespace: %q", again.fileNamespace)
			}
		})
	}
}

// Every KRaft layout runs the Kafka that `make kafka-dist` fetches by
// default, the ZooKeeper layout the 3.9.x line, and WithKafkaVersion
// retags every Kafka container, in any namespace.
func TestLayoutKafkaVersion(t *testing.T) {
	for _, l := range Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			want, other := kafkadist.DefaultVersion, "4.3.2"
			if l.ZooKeeper.InUse() {
				want, other = "3.9.2", "3.9.1"
			}
			v, err := l.KafkaVersion()
			if err != nil || v != want {
				t.Fatalf("KafkaVersion() = %q, %v; want %s", v, err, want)
			}
			if err := l.CheckKafkaVersion(v); err != nil {
				t.Errorf("the layout's own version refused: %v", err)
			}
			moved := l.In("elsewhere").WithKafkaVersion(other)
			if v, _ := moved.KafkaVersion(); v != other {
				t.Errorf("KafkaVersion() after WithKafkaVersion = %q", v)
			}
			objs, err := moved.Objects()
			if err != nil {
				t.Fatal(err)
			}
			kafka := 0
			for _, o := range objs {
				for _, c := range containers(o) {
					image := c["image"].(string)
					if strings.HasPrefix(image, KafkaImage+":") {
						kafka++
						if image != KafkaImage+":"+other {
							t.Errorf("%s %s: image %s", o.GetKind(), o.GetName(), image)
						}
					}
				}
			}
			if kafka == 0 {
				t.Errorf("no %s container retagged", KafkaImage)
			}
		})
	}
}

func TestKafkaTag(t *testing.T) {
	for _, tt := range []struct {
		image, tag string
		ok         bool
	}{
		{"apache/kafka:4.4.0", "4.4.0", true},
		{"docker.io/apache/kafka:3.9.2", "3.9.2", true},
		{"apache/kafka", "", true},
		{"apache/kafka:4.4.0@sha256:abc", "4.4.0", true},
		{"bitnami/kafka:4.0", "4.0", false},
		{"registry:5000/apache/kafka:4.4.0", "4.4.0", false},
	} {
		tag, ok := KafkaTag(tt.image)
		if tag != tt.tag || ok != tt.ok {
			t.Errorf("KafkaTag(%q) = %q, %v; want %q, %v", tt.image, tag, ok, tt.tag, tt.ok)
		}
	}
}

// cluster up waits for kube.PodsOf the layout's objects: it must be the
// layout's pod count.
func TestLayoutPodsAreItsWorkloadsReplicas(t *testing.T) {
	for _, l := range Layouts() {
		objs, err := l.Objects()
		if err != nil {
			t.Fatal(err)
		}
		if got := kube.PodsOf(objs, l.Namespace); got != l.Pods {
			t.Errorf("layout %s: its workloads ask for %d pods, Pods says %d", l.Name, got, l.Pods)
		}
	}
}

// ZooKeeper mode ended with Kafka 4: the ZooKeeper layout refuses it, with
// a reason; the KRaft layouts take any version.
func TestCheckKafkaVersion(t *testing.T) {
	zk, err := LayoutNamed("zookeeper")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := LayoutNamed("dynamic-quorum")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		layout  Layout
		version string
		wantErr string // "" for none
	}{
		{zk, "3.9.2", ""},
		{zk, "3.8.1", ""},
		{zk, "4.0.0", "ZooKeeper mode"},
		{zk, "4.4.0", "ZooKeeper mode"},
		{Layouts()[0], "3.9.2", ""},
		{Layouts()[0], "4.4.0", ""},
		{dyn, "4.4.0", ""},
		{dyn, "3.9.2", ""},
		{dyn, "3.8.1", "needs Kafka 3.9.0 or later"},
	} {
		err := tt.layout.CheckKafkaVersion(tt.version)
		if (err != nil) != (tt.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s.CheckKafkaVersion(%s) = %v, want an error saying %q", tt.layout.Name, tt.version, err, tt.wantErr)
		}
	}
}
