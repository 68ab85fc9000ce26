package brokers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

// Flavor says how a Kafka deployment maps pods to broker IDs.
type Flavor string

const (
	// FlavorStatefulSet is a plain StatefulSet on the apache/kafka image's
	// env contract, as in manifests/kafka. A pod's ID is the value of env
	// KAFKA_NODE_ID (ZooKeeper mode: KAFKA_BROKER_ID) when it resolves to a number (a literal, $(VAR)
	// references to earlier env entries, and downward-API metadata fields
	// are resolved, so "10$(POD_INDEX)" gives controller IDs 100-102), else
	// the label apps.kubernetes.io/pod-index, else the pod name's ordinal
	// suffix. Roles come from env KAFKA_PROCESS_ROLES, or from an
	// `--override process.roles=...` of kafka-server-start.sh.
	FlavorStatefulSet Flavor = "statefulset"
	// FlavorStrimzi is a Strimzi-managed cluster: pods labelled
	// strimzi.io/cluster, named <cluster>-<pool>-<id> with node pools. The ID
	// is the pod name's ordinal suffix; roles come from the labels
	// strimzi.io/broker-role and strimzi.io/controller-role.
	FlavorStrimzi Flavor = "strimzi"
	// FlavorKoperator is a Koperator-managed cluster: pods labelled
	// brokerId=<id> and app=kafka or kafka_cr=<cluster>. Roles come from the
	// labels isBrokerNode and isControllerNode that Koperator sets in KRaft
	// mode; without them a pod is a broker only.
	FlavorKoperator Flavor = "koperator"
)

// Labels and env names the flavors are recognised by.
const (
	labelPodIndex      = "apps.kubernetes.io/pod-index"
	labelSTSPodName    = "statefulset.kubernetes.io/pod-name"
	labelStrimziClust  = "strimzi.io/cluster"
	labelStrimziKind   = "strimzi.io/kind"
	labelStrimziName   = "strimzi.io/name"
	labelStrimziComp   = "strimzi.io/component-type"
	labelStrimziPool   = "strimzi.io/pool-name"
	labelStrimziBroker = "strimzi.io/broker-role"
	labelStrimziCtrl   = "strimzi.io/controller-role"
	labelKopBrokerID   = "brokerId"
	labelKopApp        = "app"
	labelKopCR         = "kafka_cr"
	labelKopBroker     = "isBrokerNode"
	labelKopCtrl       = "isControllerNode"

	envNodeID       = "KAFKA_NODE_ID"
	envBrokerID     = "KAFKA_BROKER_ID" // ZooKeeper mode
	envProcessRoles = "KAFKA_PROCESS_ROLES"
)

// knownFlavors returns the flavors in the order DetectFlavor reports them.
func knownFlavors() []Flavor { return []Flavor{FlavorStatefulSet, FlavorStrimzi, FlavorKoperator} }

// isKafkaEnv says whether env name marks a container as running Kafka under
// the statefulset flavor: the apache/kafka and confluentinc images' KAFKA_*
// contract, and bitnami's KAFKA_CFG_*.
func isKafkaEnv(name string) bool {
	switch name {
	case envNodeID, envProcessRoles, envBrokerID, "KAFKA_LOG_DIRS",
		"KAFKA_CFG_NODE_ID", "KAFKA_CFG_PROCESS_ROLES", "KAFKA_CFG_BROKER_ID", "KAFKA_CFG_LOG_DIRS":
		return true
	}
	return false
}

// ParseFlavor reads a flavor from CLI or config input: "statefulset",
// "strimzi" or "koperator", in any case. "" and "auto" return ("", nil),
// meaning the caller should DetectFlavor.
func ParseFlavor(s string) (Flavor, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "auto" {
		return "", nil
	}
	if f := Flavor(s); slices.Contains(knownFlavors(), f) {
		return f, nil
	}
	return "", fmt.Errorf("brokers: unknown flavor %q: want auto, statefulset, strimzi or koperator", s)
}

// DetectFlavor lists the pods of namespace, narrowed by the label selector
// unless it is "", and returns the flavor of the Kafka pods among them. It
// fails, saying what it found, when it recognises no Kafka pod or pods of
// several flavors.
func DetectFlavor(ctx context.Context, cs kubernetes.Interface, namespace, selector string) (Flavor, error) {
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", fmt.Errorf("brokers: detecting flavor: listing pods in %s: %w", where(namespace, selector), err)
	}
	found := map[Flavor][]string{}
	var others []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if f := classify(p); f != "" {
			found[f] = append(found[f], p.Name)
		} else {
			others = append(others, p.Name)
		}
	}
	switch len(found) {
	case 0:
		if len(others) == 0 {
			return "", fmt.Errorf("brokers: detecting flavor: no pods in %s", where(namespace, selector))
		}
		return "", fmt.Errorf("brokers: detecting flavor: none of the %d pods in %s looks like a Kafka broker or controller of a known flavor: %s",
			len(others), where(namespace, selector), names(others))
	case 1:
		for f := range found {
			return f, nil
		}
	}
	var mixed []string
	for _, f := range knownFlavors() {
		if ps, ok := found[f]; ok {
			mixed = append(mixed, fmt.Sprintf("%s (%s)", f, names(ps)))
		}
	}
	return "", fmt.Errorf("brokers: detecting flavor: Kafka pods of several flavors in %s: %s; narrow it with a label selector or name the flavor",
		where(namespace, selector), strings.Join(mixed, ", "))
}

// BrokerID returns the broker (node) ID that pod p carries under flavor f,
// and false if it carries none.
func (f Flavor) BrokerID(p *corev1.Pod) (int32, bool) {
	switch f {
	case FlavorStatefulSet:
		if c := kafkaContainer(p); c != nil {
			for _, name := range []string{envNodeID, envBrokerID} {
				if v, ok := envValue(p, c, name); ok {
					if id, ok := parseID(v); ok {
						return id, true
					}
				}
			}
		}
		if id, ok := parseID(p.Labels[labelPodIndex]); ok {
			return id, true
		}
		return ordinal(p.Name)
	case FlavorStrimzi:
		return ordinal(p.Name)
	case FlavorKoperator:
		return parseID(p.Labels[labelKopBrokerID])
	}
	return 0, false
}

// roles returns whether p runs the KRaft controller and the broker role
// under flavor f.
func (f Flavor) roles(p *corev1.Pod) (controller, broker bool) {
	switch f {
	case FlavorStatefulSet:
		v := ""
		if c := kafkaContainer(p); c != nil {
			v, _ = envValue(p, c, envProcessRoles)
			if v == "" {
				v, _ = envValue(p, c, "KAFKA_CFG_PROCESS_ROLES")
			}
			if v == "" {
				v, _ = startScriptOverride(p, c, "process.roles")
			}
		}
		if strings.TrimSpace(v) == "" {
			return false, true // ZooKeeper mode, or roles set outside env and args: a broker
		}
		for r := range strings.SplitSeq(v, ",") {
			switch strings.TrimSpace(r) {
			case "controller":
				controller = true
			case "broker":
				broker = true
			}
		}
		return controller, broker
	case FlavorStrimzi:
		b, ok := p.Labels[labelStrimziBroker]
		return p.Labels[labelStrimziCtrl] == "true", !ok || b == "true"
	case FlavorKoperator:
		b, ok := p.Labels[labelKopBroker]
		return p.Labels[labelKopCtrl] == "true", !ok || b == "true"
	}
	return false, false
}

// classify returns the flavor of Kafka pod p, or "" if p does not look like
// a Kafka broker or controller of any flavor.
func classify(p *corev1.Pod) Flavor {
	l := p.Labels
	if c, ok := l[labelStrimziClust]; ok && c != "" {
		kind, hasKind := l[labelStrimziKind]
		_, broker := l[labelStrimziBroker]
		_, ctrl := l[labelStrimziCtrl]
		_, pool := l[labelStrimziPool]
		if (!hasKind || kind == "Kafka") &&
			(broker || ctrl || pool || l[labelStrimziComp] == "kafka" || l[labelStrimziName] == c+"-kafka") {
			return FlavorStrimzi
		}
		return ""
	}
	if _, ok := parseID(l[labelKopBrokerID]); ok && (l[labelKopApp] == "kafka" || l[labelKopCR] != "") {
		return FlavorKoperator
	}
	if statefulSetPod(p) && looksLikeKafka(p) {
		return FlavorStatefulSet
	}
	return ""
}

func statefulSetPod(p *corev1.Pod) bool {
	if _, ok := p.Labels[labelPodIndex]; ok {
		return true
	}
	if _, ok := p.Labels[labelSTSPodName]; ok {
		return true
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "StatefulSet" {
			return true
		}
	}
	return false
}

// looksLikeKafka says whether a container of p has env of the Kafka images'
// contract, or runs Kafka's own start script.
func looksLikeKafka(p *corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if startsKafka(&c) {
			return true
		}
		for _, e := range c.Env {
			if isKafkaEnv(e.Name) {
				return true
			}
		}
	}
	return false
}

// KafkaImage returns the image of p's Kafka container (see
// kafkaContainer), "" when p has no container.
func KafkaImage(p *corev1.Pod) string {
	if c := kafkaContainer(p); c != nil {
		return c.Image
	}
	return ""
}

// kafkaContainer returns the container of p that runs Kafka: the one named
// "kafka" (as the manifests, Strimzi and Koperator name it), else the first
// with Kafka env, else the first; nil if p has none.
func kafkaContainer(p *corev1.Pod) *corev1.Container {
	cs := p.Spec.Containers
	for i := range cs {
		if cs[i].Name == "kafka" {
			return &cs[i]
		}
	}
	for i := range cs {
		for _, e := range cs[i].Env {
			if isKafkaEnv(e.Name) {
				return &cs[i]
			}
		}
	}
	if len(cs) > 0 {
		return &cs[0]
	}
	return nil
}

// envValue returns the value env name has in container c of pod p, as far
// as the pod spec tells: literal values with $(VAR) references to earlier
// entries expanded as the kubelet does, and downward-API fields of the pod.
// Values from config maps, secrets, envFrom or resources are unknown (false).
func envValue(p *corev1.Pod, c *corev1.Container, name string) (string, bool) {
	v, ok := envValues(p, c)[name]
	return v, ok
}

// envValues is every env entry of container c of pod p whose value the pod
// spec tells (see envValue), by name.
func envValues(p *corev1.Pod, c *corev1.Container) map[string]string {
	vals := map[string]string{}
	for _, e := range c.Env {
		v, ok := e.Value, true
		switch {
		case e.ValueFrom == nil:
			v = kube.Expand(v, vals)
		case e.ValueFrom.FieldRef != nil:
			v, ok = podField(p, e.ValueFrom.FieldRef.FieldPath)
		default:
			ok = false
		}
		if ok {
			vals[e.Name] = v
		} else {
			delete(vals, e.Name) // a later entry overrides an earlier one
		}
	}
	return vals
}

// podField returns the downward-API field path of p, for the fields that
// the pod object itself holds.
func podField(p *corev1.Pod, path string) (string, bool) {
	switch path {
	case "metadata.name":
		return p.Name, true
	case "metadata.namespace":
		return p.Namespace, true
	case "metadata.uid":
		return string(p.UID), true
	case "spec.nodeName":
		return p.Spec.NodeName, true
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, true
	case "status.podIP":
		return p.Status.PodIP, true
	case "status.hostIP":
		return p.Status.HostIP, true
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": p.Labels, "metadata.annotations": p.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok {
			if key, ok = strings.CutSuffix(key, "']"); ok {
				v, ok := m[key]
				return v, ok
			}
		}
	}
	return "", false
}

// ordinal returns the number after the last '-' of name.
func ordinal(name string) (int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return 0, false
	}
	return parseID(name[i+1:])
}

func parseID(s string) (int32, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(id), true
}

// where names a namespace and selector in messages.
func where(namespace, selector string) string {
	if selector == "" {
		return "namespace " + namespace
	}
	return fmt.Sprintf("namespace %s (selector %q)", namespace, selector)
}

// maxListed caps the pod names that a message lists.
const maxListed = 10

// names joins pod names, at most maxListed of them.
func names(ns []string) string {
	ns = slices.Sorted(slices.Values(ns))
	if len(ns) > maxListed {
		return fmt.Sprintf("%s and %d more", strings.Join(ns[:maxListed], ", "), len(ns)-maxListed)
	}
	return strings.Join(ns, ", ")
}
