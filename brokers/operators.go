package brokers

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Deployment is an operator-managed Kafka cluster as its custom resources
// describe it: which node IDs the pods carry, how to select the pods, and
// where clients bootstrap.
type Deployment struct {
	Flavor    Flavor // FlavorStrimzi or FlavorKoperator
	Namespace string
	// Name is the name of the Kafka (Strimzi) or KafkaCluster (Koperator)
	// resource.
	Name string
	// Brokers and Controllers are the node IDs with the broker and with the
	// KRaft controller role, ascending. A combined node is in both; a
	// ZooKeeper-mode cluster has no controllers.
	Brokers     []int32
	Controllers []int32
	// Selector selects the pods of every Kafka node of the cluster, brokers
	// and controllers (for Snapshot, DetectFlavor, and the suite's
	// target.selector).
	Selector string
	// BrokerSelector selects the pods with the broker role only.
	BrokerSelector string
	// BootstrapService is the Service in Namespace that clients bootstrap
	// from, and BootstrapPort its plaintext client port; 0 when the cluster
	// has no plaintext internal listener.
	BootstrapService string
	BootstrapPort    int32
	// ClusterID is the Kafka cluster ID from the resource's status; "" until
	// the operator has reported it.
	ClusterID string
}

// Bootstrap returns the bootstrap address in cluster DNS,
// <service>.<namespace>.svc:<port>, or "" without a plaintext listener.
func (d Deployment) Bootstrap() string {
	if d.BootstrapPort == 0 {
		return ""
	}
	return fmt.Sprintf("%s.%s.svc:%d", d.BootstrapService, d.Namespace, d.BootstrapPort)
}

// String describes d in messages: flavor, namespace, name and node IDs.
func (d Deployment) String() string {
	return fmt.Sprintf("%s cluster %s/%s (brokers %v, controllers %v)", d.Flavor, d.Namespace, d.Name, d.Brokers, d.Controllers)
}

// An annotation and the API groups of the operators' custom resources.
const (
	annotStrimziNextIDs = "strimzi.io/next-node-ids"
	groupStrimzi        = "kafka.strimzi.io"
	groupKoperator      = "kafka.banzaicloud.io"
)

// strimziKafkas, strimziNodePools and koperatorClusters are the operators'
// resources in the versions this package reads, the preferred first:
// Strimzi serves kafka.strimzi.io/v1 since 0.49 and only v1 since 1.0.
func strimziKafkas() []schema.GroupVersionResource {
	return versions(groupStrimzi, "kafkas", "v1", "v1beta2")
}

func strimziNodePools() []schema.GroupVersionResource {
	return versions(groupStrimzi, "kafkanodepools", "v1", "v1beta2")
}

func koperatorClusters() []schema.GroupVersionResource {
	return versions(groupKoperator, "kafkaclusters", "v1beta1")
}

func versions(group, resource string, vs ...string) []schema.GroupVersionResource {
	gvrs := make([]schema.GroupVersionResource, len(vs))
	for i, v := range vs {
		gvrs[i] = schema.GroupVersionResource{Group: group, Version: v, Resource: resource}
	}
	return gvrs
}

// DetectOperator lists the Strimzi Kafka resources (with the namespace's
// KafkaNodePools) and the Koperator KafkaCluster resources in namespace and
// returns one Deployment for each, Strimzi first, each operator's by name.
// A resource type that does not exist, because the operator's CRDs are not
// installed, counts as no cluster of that operator: finding nothing returns
// an empty slice and no error. It fails when it cannot list (for example,
// without RBAC permission to) or cannot make sense of a resource.
func DetectOperator(ctx context.Context, dyn dynamic.Interface, namespace string) ([]Deployment, error) {
	var out []Deployment
	kafkas, err := listServed(ctx, dyn, namespace, strimziKafkas())
	if err != nil {
		return nil, err
	}
	if len(kafkas) > 0 {
		pools, err := listServed(ctx, dyn, namespace, strimziNodePools())
		if err != nil {
			return nil, err
		}
		for _, k := range kafkas {
			d, err := StrimziDeployment(k, pools)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	clusters, err := listServed(ctx, dyn, namespace, koperatorClusters())
	if err != nil {
		return nil, err
	}
	for _, kc := range clusters {
		d, err := KoperatorDeployment(kc)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// listServed lists a resource in namespace under the first of gvrs (one
// resource in several versions) that the API server serves, sorted by name.
// A version that is not served, or a resource type that does not exist,
// answers NotFound: listServed then tries the next, and returns nothing
// when none is served.
func listServed(ctx context.Context, dyn dynamic.Interface, namespace string, gvrs []schema.GroupVersionResource) ([]*unstructured.Unstructured, error) {
	for _, gvr := range gvrs {
		list, err := dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("brokers: detecting operator: listing %s.%s/%s in namespace %s: %w",
				gvr.Resource, gvr.Group, gvr.Version, namespace, err)
		}
		out := make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return cmp.Compare(a.GetName(), b.GetName()) })
		return out, nil
	}
	return nil, nil
}

// integerField returns the integer at path of obj, which must be in the
// range of a node ID or port (0 to MaxInt32).
func integerField(obj map[string]any, path ...string) (int64, error) {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !ok {
		return 0, fmt.Errorf("no field %v", path)
	}
	n, ok := integer(v)
	if !ok || n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("field %v is %v, not an integer from 0 to %d", path, v, math.MaxInt32)
	}
	return n, nil
}

// int32s returns the list of integers at path of obj, false if there is
// none.
func int32s(obj map[string]any, path ...string) ([]int32, bool, error) {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !ok || v == nil {
		return nil, false, nil
	}
	items, isList := v.([]any)
	if !isList {
		return nil, false, fmt.Errorf("field %v is %T, not a list", path, v)
	}
	out := make([]int32, 0, len(items))
	for _, item := range items {
		n, ok := integer(item)
		if !ok || n < 0 || n > math.MaxInt32 {
			return nil, false, fmt.Errorf("field %v holds %v, not a node ID", path, item)
		}
		out = append(out, int32(n))
	}
	return out, true, nil
}

// integer returns v as an int64 if it is a whole number: objects from the
// API server hold int64, objects decoded from YAML by hand float64.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}
