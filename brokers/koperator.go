package brokers

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// KoperatorDeployment derives the Deployment of a Koperator KafkaCluster.
// Each entry of spec.brokers is a node with that ID. In KRaft mode
// (spec.kRaft) its roles are the processRoles of its brokerConfig together
// with those of its brokerConfigGroup, as Koperator merges them; in
// ZooKeeper mode every node is a broker.
//
// Pods are selected by app=kafka and kafka_cr=<cluster>, brokers also by
// isBrokerNode=true. Clients bootstrap from the Service <cluster>-headless
// when spec.headlessServiceEnabled, else <cluster>-all-broker, on the
// containerPort of the first plaintext internal listener that is not the
// controllers'.
func KoperatorDeployment(kc *unstructured.Unstructured) (Deployment, error) {
	name, ns := kc.GetName(), kc.GetNamespace()
	cr := fmt.Sprintf("brokers: Koperator KafkaCluster %s/%s", ns, name)
	spec, _, err := unstructured.NestedMap(kc.Object, "spec")
	if err != nil {
		return Deployment{}, fmt.Errorf("%s: %w", cr, err)
	}
	kraft, _, _ := unstructured.NestedBool(spec, "kRaft")
	groups, _, _ := unstructured.NestedMap(spec, "brokerConfigGroups")
	nodes, _, _ := unstructured.NestedSlice(spec, "brokers")
	if len(nodes) == 0 {
		return Deployment{}, fmt.Errorf("%s has no spec.brokers", cr)
	}

	d := Deployment{
		Flavor:           FlavorKoperator,
		Namespace:        ns,
		Name:             name,
		Selector:         labels.Set{labelKopApp: "kafka", labelKopCR: name}.String(),
		BootstrapService: name + "-all-broker",
	}
	d.BrokerSelector = d.Selector + "," + labelKopBroker + "=true"
	seen := map[int32]bool{}
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		id64, err := integerField(node, "id")
		if err != nil {
			return Deployment{}, fmt.Errorf("%s: spec.brokers: %w", cr, err)
		}
		id := int32(id64)
		if seen[id] {
			return Deployment{}, fmt.Errorf("%s: node ID %d is in spec.brokers twice", cr, id)
		}
		seen[id] = true
		if !kraft {
			d.Brokers = append(d.Brokers, id)
			continue
		}
		roles, _, _ := unstructured.NestedStringSlice(node, "brokerConfig", "processRoles")
		if group, _, _ := unstructured.NestedString(node, "brokerConfigGroup"); group != "" {
			g, ok := groups[group].(map[string]any)
			if !ok {
				return Deployment{}, fmt.Errorf("%s: node %d: brokerConfigGroup %q does not exist", cr, id, group)
			}
			more, _, _ := unstructured.NestedStringSlice(g, "processRoles")
			roles = append(roles, more...)
		}
		if len(roles) == 0 {
			return Deployment{}, fmt.Errorf("%s: node %d has no processRoles, which KRaft mode needs", cr, id)
		}
		if slices.Contains(roles, "broker") {
			d.Brokers = append(d.Brokers, id)
		}
		if slices.Contains(roles, "controller") {
			d.Controllers = append(d.Controllers, id)
		}
	}
	slices.Sort(d.Brokers)
	slices.Sort(d.Controllers)

	if headless, _, _ := unstructured.NestedBool(spec, "headlessServiceEnabled"); headless {
		d.BootstrapService = name + "-headless"
	}
	listeners, _, _ := unstructured.NestedSlice(spec, "listenersConfig", "internalListeners")
	for _, l := range listeners {
		m, _ := l.(map[string]any)
		if m["type"] == "plaintext" && m["usedForControllerCommunication"] != true {
			port, err := integerField(m, "containerPort")
			if err != nil {
				return Deployment{}, fmt.Errorf("%s: internal listener %v: %w", cr, m["name"], err)
			}
			d.BootstrapPort = int32(port)
			break
		}
	}
	d.ClusterID, _, _ = unstructured.NestedString(kc.Object, "status", "clusterID")
	return d, nil
}
