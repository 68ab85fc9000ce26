package brokers

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// StrimziDeployment derives the Deployment of a Strimzi Kafka resource from
// it and the KafkaNodePools of its namespace; pools of other clusters (by
// their strimzi.io/cluster label) are ignored. The cluster must use node
// pools (KRaft).
//
// A pool's node IDs are its status.nodeIds once the operator has assigned
// them; during a scale they may lag spec.replicas. Before that, IDs are
// derived as Strimzi assigns them by default: each pool without assigned
// IDs, in the order the API lists pools (by name), takes spec.replicas of
// the lowest IDs that no other pool uses, from 0 up. A pool annotated
// strimzi.io/next-node-ids without assigned IDs is an error: this function
// does not implement ID ranges; wait until the operator has set the status.
//
// Pods are selected by strimzi.io/cluster, strimzi.io/kind=Kafka and
// strimzi.io/name=<cluster>-kafka, brokers also by
// strimzi.io/broker-role=true. Clients bootstrap from the Service
// <cluster>-kafka-bootstrap, on the port of the first internal listener
// without TLS.
func StrimziDeployment(kafka *unstructured.Unstructured, pools []*unstructured.Unstructured) (Deployment, error) {
	name, ns := kafka.GetName(), kafka.GetNamespace()
	cr := fmt.Sprintf("brokers: Strimzi Kafka %s/%s", ns, name)
	var own []*unstructured.Unstructured
	for _, p := range pools {
		if p.GetNamespace() == ns && p.GetLabels()[labelStrimziClust] == name {
			own = append(own, p)
		}
	}
	if len(own) == 0 {
		return Deployment{}, fmt.Errorf("%s has no KafkaNodePool labelled %s=%s: only node-pool (KRaft) clusters are supported",
			cr, labelStrimziClust, name)
	}
	slices.SortFunc(own, func(a, b *unstructured.Unstructured) int { return cmp.Compare(a.GetName(), b.GetName()) })

	ids := make([][]int32, len(own))
	assigned := make([]bool, len(own))
	used := map[int32]string{} // node ID -> pool
	for i, p := range own {
		got, ok, err := int32s(p.Object, "status", "nodeIds")
		if err != nil {
			return Deployment{}, fmt.Errorf("%s: KafkaNodePool %s: %w", cr, p.GetName(), err)
		}
		if !ok {
			continue
		}
		for _, id := range got {
			if prev, dup := used[id]; dup {
				return Deployment{}, fmt.Errorf("%s: node ID %d is in KafkaNodePools %s and %s", cr, id, prev, p.GetName())
			}
			used[id] = p.GetName()
		}
		ids[i], assigned[i] = got, true
	}
	for i, p := range own {
		if assigned[i] {
			continue
		}
		if _, ok := p.GetAnnotations()[annotStrimziNextIDs]; ok {
			return Deployment{}, fmt.Errorf("%s: KafkaNodePool %s has annotation %s and no status.nodeIds yet: wait until the operator has assigned its node IDs",
				cr, p.GetName(), annotStrimziNextIDs)
		}
		replicas, err := integerField(p.Object, "spec", "replicas")
		if err != nil {
			return Deployment{}, fmt.Errorf("%s: KafkaNodePool %s: %w", cr, p.GetName(), err)
		}
		for next := int32(0); int64(len(ids[i])) < replicas; next++ {
			if _, taken := used[next]; !taken {
				used[next] = p.GetName()
				ids[i] = append(ids[i], next)
			}
		}
	}

	d := Deployment{
		Flavor:           FlavorStrimzi,
		Namespace:        ns,
		Name:             name,
		Selector:         labels.Set{labelStrimziClust: name, labelStrimziKind: "Kafka", labelStrimziName: name + "-kafka"}.String(),
		BootstrapService: name + "-kafka-bootstrap",
	}
	d.BrokerSelector = d.Selector + "," + labelStrimziBroker + "=true"
	for i, p := range own {
		roles, _, err := unstructured.NestedStringSlice(p.Object, "spec", "roles")
		if err != nil || len(roles) == 0 {
			return Deployment{}, fmt.Errorf("%s: KafkaNodePool %s has no spec.roles", cr, p.GetName())
		}
		if slices.Contains(roles, "broker") {
			d.Brokers = append(d.Brokers, ids[i]...)
		}
		if slices.Contains(roles, "controller") {
			d.Controllers = append(d.Controllers, ids[i]...)
		}
	}
	slices.Sort(d.Brokers)
	slices.Sort(d.Controllers)

	listeners, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
	for _, l := range listeners {
		m, _ := l.(map[string]any)
		if m["type"] == "internal" && m["tls"] == false {
			port, err := integerField(m, "port")
			if err != nil {
				return Deployment{}, fmt.Errorf("%s: listener %v: %w", cr, m["name"], err)
			}
			d.BootstrapPort = int32(port)
			break
		}
	}
	d.ClusterID, _, _ = unstructured.NestedString(kafka.Object, "status", "clusterId")
	return d, nil
}
