// This file is long because the operators' recorded resources (Strimzi's
// and Koperator's) are checked from three sides that share its fixtures:
// the deployments read from them, their broker IDs against the pods, and
// flavor detection.

package brokers

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kafkachaos/kafkachaos/manifests"
)

// recorded is one operator's recorded objects in testdata/<flavor>.
type recorded struct {
	flavor Flavor
	crs    []*unstructured.Unstructured // the cluster resource, then node pools
	pods   []*corev1.Pod                // every pod of the namespace
}

func loadRecorded(t *testing.T, f Flavor) recorded {
	t.Helper()
	dir := filepath.Join("testdata", string(f))
	r := recorded{flavor: f}
	crFiles := map[Flavor][]string{FlavorStrimzi: {"kafka.yaml", "kafkanodepools.yaml"}, FlavorKoperator: {"kafkacluster.yaml"}}[f]
	for _, name := range crFiles {
		r.crs = append(r.crs, loadObjects(t, filepath.Join(dir, name))...)
	}
	for _, o := range loadObjects(t, filepath.Join(dir, "pods.yaml")) {
		p := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, p); err != nil {
			t.Fatalf("%s: pod %s: %v", dir, o.GetName(), err)
		}
		r.pods = append(r.pods, p)
	}
	return r
}

// deployment derives the Deployment from the recorded resources.
func (r recorded) deployment() (Deployment, error) {
	if r.flavor == FlavorStrimzi {
		return StrimziDeployment(r.crs[0], r.crs[1:])
	}
	return KoperatorDeployment(r.crs[0])
}

func (r recorded) podObjects() []runtime.Object {
	var objs []runtime.Object
	for _, p := range r.pods {
		objs = append(objs, p)
	}
	return objs
}

// loadObjects reads the YAML documents of path as the API returns objects:
// through JSON, so that numbers are int64.
func loadObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		var doc runtime.RawExtension
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(doc.Raw) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(doc.Raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, u)
	}
}

// object decodes one YAML object as a hand-written manifest is decoded, so
// that numbers are float64.
func object(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestOperatorDeploymentsFromRecordedResources(t *testing.T) {
	tests := []struct {
		flavor Flavor
		want   Deployment
		// statusBootstrap is where the resource's status says clients
		// bootstrap, as a path of keys and list indexes.
		statusBootstrap []any
	}{
		{
			flavor: FlavorStrimzi,
			want: Deployment{
				Flavor: FlavorStrimzi, Namespace: "kafka-strimzi", Name: "my-cluster",
				Brokers: []int32{0, 1, 2}, Controllers: []int32{3, 4, 5},
				Selector:         "strimzi.io/cluster=my-cluster,strimzi.io/kind=Kafka,strimzi.io/name=my-cluster-kafka",
				BrokerSelector:   "strimzi.io/cluster=my-cluster,strimzi.io/kind=Kafka,strimzi.io/name=my-cluster-kafka,strimzi.io/broker-role=true",
				BootstrapService: "my-cluster-kafka-bootstrap", BootstrapPort: 9092,
				ClusterID: "q8Zk3n1oR4ur5dUqSj0dYw",
			},
			statusBootstrap: []any{"status", "listeners", 0, "bootstrapServers"},
		},
		{
			flavor: FlavorKoperator,
			want: Deployment{
				Flavor: FlavorKoperator, Namespace: "kafka-koperator", Name: "kafka",
				Brokers: []int32{0, 1, 2}, Controllers: []int32{100, 101, 102},
				Selector:         "app=kafka,kafka_cr=kafka",
				BrokerSelector:   "app=kafka,kafka_cr=kafka,isBrokerNode=true",
				BootstrapService: "kafka-headless", BootstrapPort: 29092,
				ClusterID: "ZjM4NmI3YzgtNWU0Yi00",
			},
			statusBootstrap: []any{"status", "listenerStatuses", "internalListeners", "internal", 0, "address"},
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor), func(t *testing.T) {
			r := loadRecorded(t, tt.flavor)
			got, err := r.deployment()
			if err != nil {
				t.Fatal(err)
			}
			assertDeployment(t, got, tt.want)
			// The operator's own status names the same service and port
			// (Koperator's with the cluster domain).
			status, ok := lookup(r.crs[0].Object, tt.statusBootstrap...).(string)
			if !ok {
				t.Fatalf("recorded status has no bootstrap address at %v", tt.statusBootstrap)
			}
			host, port, _ := strings.Cut(got.Bootstrap(), ":")
			if !strings.HasPrefix(status, host) || !strings.HasSuffix(status, ":"+port) {
				t.Errorf("Bootstrap() = %q; the status says %q", got.Bootstrap(), status)
			}
		})
	}
}

// lookup follows path (map keys and list indexes) in v.
func lookup(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func assertDeployment(t *testing.T, got, want Deployment) {
	t.Helper()
	if got.String() != want.String() || !slices.Equal(got.Brokers, want.Brokers) || !slices.Equal(got.Controllers, want.Controllers) {
		t.Errorf("got %s; want %s", got, want)
	}
	type other struct {
		Selector, BrokerSelector, BootstrapService string
		BootstrapPort                              int32
		ClusterID                                  string
	}
	g := other{got.Selector, got.BrokerSelector, got.BootstrapService, got.BootstrapPort, got.ClusterID}
	w := other{want.Selector, want.BrokerSelector, want.BootstrapService, want.BootstrapPort, want.ClusterID}
	if g != w {
		t.Errorf("got %+v; want %+v", g, w)
	}
}

// TestOperatorIDsMatchPods cross-checks what the resources say against the
// pods the operator runs: the flavor DetectFlavor sees, and the IDs and
// roles that BrokerID and Snapshot read from the pods the selectors select.
func TestOperatorIDsMatchPods(t *testing.T) {
	for _, f := range []Flavor{FlavorStrimzi, FlavorKoperator} {
		t.Run(string(f), func(t *testing.T) {
			r := loadRecorded(t, f)
			d, err := r.deployment()
			if err != nil {
				t.Fatal(err)
			}
			cs := fake.NewClientset(r.podObjects()...)
			for _, sel := range []string{"", d.Selector, d.BrokerSelector} {
				if got, err := DetectFlavor(t.Context(), cs, d.Namespace, sel); err != nil || got != f {
					t.Errorf("DetectFlavor(selector %q) = %q, %v; want %q", sel, got, err, f)
				}
			}

			all, brokers := selectIDs(t, f, r.pods, d.Selector), selectIDs(t, f, r.pods, d.BrokerSelector)
			if want := sortedUnion(d.Brokers, d.Controllers); !slices.Equal(all, want) {
				t.Errorf("pods selected by %q carry IDs %v; the resources say %v", d.Selector, all, want)
			}
			if !slices.Equal(brokers, d.Brokers) {
				t.Errorf("pods selected by %q carry IDs %v; the resources say brokers %v", d.BrokerSelector, brokers, d.Brokers)
			}

			snap, err := Snapshot(t.Context(), cs, d.Namespace, d.Selector, "")
			if err != nil {
				t.Fatal(err)
			}
			var snapBrokers, snapControllers []int32
			for _, b := range snap {
				if b.Broker {
					snapBrokers = append(snapBrokers, b.ID)
				}
				if b.Controller {
					snapControllers = append(snapControllers, b.ID)
				}
				if len(b.Ephemeral) > 0 || len(b.Volumes) != 1 {
					t.Errorf("node %d (pod %s): volumes %v, ephemeral data dirs %v; want one claim", b.ID, b.Pod, b.Volumes, b.Ephemeral)
				}
			}
			if !slices.Equal(snapBrokers, d.Brokers) || !slices.Equal(snapControllers, d.Controllers) {
				t.Errorf("Snapshot: brokers %v, controllers %v; the resources say %v, %v", snapBrokers, snapControllers, d.Brokers, d.Controllers)
			}
		})
	}
}

// selectIDs returns the sorted IDs that BrokerID reads from the pods that
// selector selects.
func selectIDs(t *testing.T, f Flavor, pods []*corev1.Pod, selector string) []int32 {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, p := range pods {
		if !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		id, ok := f.BrokerID(p)
		if !ok {
			t.Errorf("pod %s selected by %q carries no ID", p.Name, selector)
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func sortedUnion(a, b []int32) []int32 {
	u := slices.Concat(a, b)
	slices.Sort(u)
	return slices.Compact(u)
}

// TestOperatorExamplesIDs derives the deployments of the example manifests
// (no status yet, so Strimzi's IDs come from the default assignment): they
// match the recorded clusters the operators made of them.
func TestOperatorExamplesIDs(t *testing.T) {
	for _, f := range []Flavor{FlavorStrimzi, FlavorKoperator} {
		t.Run(string(f), func(t *testing.T) {
			e, err := manifests.OperatorExampleFor(string(f))
			if err != nil {
				t.Fatal(err)
			}
			objs, err := e.Objects()
			if err != nil {
				t.Fatal(err)
			}
			var got Deployment
			switch f {
			case FlavorStrimzi:
				var kafka *unstructured.Unstructured
				var pools []*unstructured.Unstructured
				for _, o := range objs {
					switch o.GetKind() {
					case "Kafka":
						kafka = o
					case "KafkaNodePool":
						pools = append(pools, o)
					}
				}
				got, err = StrimziDeployment(kafka, pools)
			case FlavorKoperator:
				i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "KafkaCluster" })
				got, err = KoperatorDeployment(objs[i])
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := loadRecorded(t, f).deployment()
			if err != nil {
				t.Fatal(err)
			}
			want.ClusterID = "" // in the status only
			if got.Name != e.Cluster || got.Namespace != e.Namespace {
				t.Errorf("example %s: cluster %s/%s; OperatorExample says %s/%s", e.File, got.Namespace, got.Name, e.Namespace, e.Cluster)
			}
			assertDeployment(t, got, want)
		})
	}
}

// fakeDynamic is a dynamic client holding objs that serves only the
// resources in served: listing any other answers NotFound, as the API
// server does for a resource type whose CRD is not installed.
func fakeDynamic(served []schema.GroupVersionResource, objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	listKinds := map[schema.GroupVersionResource]string{}
	for _, gvr := range slices.Concat(strimziKafkas(), strimziNodePools(), koperatorClusters()) {
		listKinds[gvr] = map[string]string{"kafkas": "KafkaList", "kafkanodepools": "KafkaNodePoolList", "kafkaclusters": "KafkaClusterList"}[gvr.Resource]
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	dyn.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if slices.Contains(served, a.GetResource()) {
			return false, nil, nil
		}
		return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), "")
	})
	return dyn
}

// asVersion returns copies of objs with apiVersion group/version.
func asVersion(objs []*unstructured.Unstructured, version string) []runtime.Object {
	var out []runtime.Object
	for _, o := range objs {
		c := o.DeepCopy()
		c.SetAPIVersion(c.GroupVersionKind().Group + "/" + version)
		out = append(out, c)
	}
	return out
}

func TestDetectOperator(t *testing.T) {
	strimzi, koperator := loadRecorded(t, FlavorStrimzi), loadRecorded(t, FlavorKoperator)
	strimziV1 := append(strimziKafkas()[:1:1], strimziNodePools()[0])
	strimziV1beta2 := []schema.GroupVersionResource{strimziKafkas()[1], strimziNodePools()[1]}
	allCRDs := slices.Concat(strimziV1, strimziV1beta2, koperatorClusters())
	// Koperator's cluster, moved to the Strimzi cluster's namespace.
	kopHere := koperator.crs[0].DeepCopy()
	kopHere.SetNamespace("kafka-strimzi")

	tests := []struct {
		name      string
		served    []schema.GroupVersionResource
		objs      []runtime.Object
		namespace string
		want      []string // Deployment.String() of each
		wantErr   string
	}{
		{name: "no CRDs", namespace: "kafka-strimzi"},
		{name: "CRDs, no clusters", served: allCRDs, namespace: "kafka-strimzi"},
		{
			name: "strimzi v1", served: allCRDs, objs: asVersion(strimzi.crs, "v1"), namespace: "kafka-strimzi",
			want: []string{"strimzi cluster kafka-strimzi/my-cluster (brokers [0 1 2], controllers [3 4 5])"},
		},
		{
			name: "strimzi v1beta2 only (before 0.49)", served: strimziV1beta2, objs: asVersion(strimzi.crs, "v1beta2"), namespace: "kafka-strimzi",
			want: []string{"strimzi cluster kafka-strimzi/my-cluster (brokers [0 1 2], controllers [3 4 5])"},
		},
		{
			name: "koperator without Strimzi CRDs", served: koperatorClusters(), objs: []runtime.Object{koperator.crs[0]}, namespace: "kafka-koperator",
			want: []string{"koperator cluster kafka-koperator/kafka (brokers [0 1 2], controllers [100 101 102])"},
		},
		{
			name: "both operators in one namespace", served: allCRDs, objs: append(asVersion(strimzi.crs, "v1"), kopHere), namespace: "kafka-strimzi",
			want: []string{
				"strimzi cluster kafka-strimzi/my-cluster (brokers [0 1 2], controllers [3 4 5])",
				"koperator cluster kafka-strimzi/kafka (brokers [0 1 2], controllers [100 101 102])",
			},
		},
		{name: "clusters in other namespaces", served: allCRDs, objs: append(asVersion(strimzi.crs, "v1"), koperator.crs[0]), namespace: "kafka"},
		{
			name: "a pool the operator has not assigned yet, with ID ranges", served: allCRDs, namespace: "kafka-strimzi",
			objs: []runtime.Object{strimzi.crs[0], object(t, `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata: {name: b, namespace: kafka-strimzi, labels: {strimzi.io/cluster: my-cluster}, annotations: {strimzi.io/next-node-ids: "[100-199]"}}
spec: {replicas: 3, roles: [broker]}
`)},
			wantErr: "wait until the operator has assigned its node IDs",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps, err := DetectOperator(t.Context(), fakeDynamic(tt.served, tt.objs...), tt.namespace)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DetectOperator() = %v, %v; want an error containing %q", deps, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range deps {
				got = append(got, d.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("DetectOperator() = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestDetectOperatorListError(t *testing.T) {
	dyn := fakeDynamic(koperatorClusters())
	dyn.PrependReactor("list", "kafkaclusters", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", errors.New("RBAC says no"))
	})
	_, err := DetectOperator(t.Context(), dyn, "kafka")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "listing kafkaclusters.kafka.banzaicloud.io/v1beta1 in namespace kafka") {
		t.Fatalf("DetectOperator() error = %v; want a wrapped Forbidden naming the resource", err)
	}
}
