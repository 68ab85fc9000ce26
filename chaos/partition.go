package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// KindPartition is the ledger kind of a network partition, on the
// NetworkPolicy that makes it.
const KindPartition = "partition"

// Labels of the NetworkPolicy a Partition creates; RecoverAll finds
// leftover ones by the first (managedBySelector).
const (
	managedByLabel = "app.kubernetes.io/managed-by" // value "kafkachaos"
	faultLabel     = "kafkachaos.io/fault"          // value the fault kind
)

// PodNameLabel is the label StatefulSets (and Strimzi's pod sets) give each
// pod, with the pod's name as value: a partition selects pods by it.
const PodNameLabel = "statefulset.kubernetes.io/pod-name"

// Default ports of a Partition.
const (
	DefaultBrokerPort     int32 = 9092
	DefaultControllerPort int32 = 9093
)

// PartitionMode is what a Partition cuts. Between the victim and itself
// nothing is ever cut.
type PartitionMode string

// Partition modes.
const (
	// PartitionIsolate cuts the victim off from every other Kafka pod
	// (brokers and controllers), on all ports, both ways; clients (other
	// pods of the namespace, pods of other namespaces) still reach it.
	PartitionIsolate PartitionMode = "isolate"
	// PartitionPeersOnly is PartitionIsolate except on the controller port:
	// the victim still reaches the KRaft quorum and, in combined mode, the
	// other voters reach it.
	PartitionPeersOnly PartitionMode = "peers-only"
	// PartitionController cuts the victim (the active controller) off from
	// the other Kafka pods on every port but the broker port: the quorum
	// loses it, replication does not.
	PartitionController PartitionMode = "controller"
	// PartitionClients makes the victim unreachable from anything but the
	// other Kafka pods (ingress only; its own connections are left alone).
	PartitionClients PartitionMode = "clients"
)

// PartitionModes lists the modes.
func PartitionModes() []PartitionMode {
	return []PartitionMode{PartitionIsolate, PartitionPeersOnly, PartitionController, PartitionClients}
}

// Keys of a partition entry's Data.
const (
	dataMode = "mode"
	dataPod  = "pod"
)

// Partition cuts a Kafka pod off the network with a NetworkPolicy
// (networking.k8s.io/v1) in the Kafka namespace, so it holds on any
// cluster whose network plugin enforces NetworkPolicy, and on no other:
// Probe shows whether it holds. The policy selects pods by PodNameLabel,
// which every pod of KafkaPods must carry. It is its own ledger record: it
// carries the labels app.kubernetes.io/managed-by=kafkachaos and
// kafkachaos.io/fault=partition and a ledger entry of kind KindPartition,
// and Recover (or `kafkachaos recover`) deletes it. One partition per
// victim at a time: the policy is named after the victim.
type Partition struct {
	Scope
	Mode PartitionMode
	// Pod is the victim.
	Pod string
	// KafkaPods are all the Kafka pods of the cluster in Namespace (brokers
	// and controllers), the victim included.
	KafkaPods []string
	// ControllerPort is the KRaft controller listener's port; zero means
	// DefaultControllerPort.
	ControllerPort int32
	// BrokerPort is the inter-broker listener's port; zero means
	// DefaultBrokerPort.
	BrokerPort int32
	// Exec reaches the pods' containers for Probe (NewExec); Inject and
	// Recover do not use it.
	Exec Exec
	// Clients are client pods (the in-cluster load agents) that Probe
	// connects from in the clients mode, to show the cut from their side;
	// without them the clients mode is probed between Kafka pods only.
	Clients []string
}

var _ Fault = (*Partition)(nil)

// Name implements Fault.
func (f *Partition) Name() string {
	return fmt.Sprintf("partition pod %s/%s (%s)", f.Namespace, f.Pod, f.Mode)
}

// Plan says what Inject does.
func (f *Partition) Plan() string {
	cut := fmt.Sprintf("cuts pod %s off from the other Kafka pods, both ways, on every port", f.Pod)
	switch f.Mode {
	case PartitionPeersOnly:
		cut += fmt.Sprintf(" but the controller port %d", f.controllerPort())
	case PartitionController:
		cut += fmt.Sprintf(" but the broker port %d", f.brokerPort())
	case PartitionClients:
		cut = fmt.Sprintf("lets only the Kafka pods reach pod %s (its own connections are left alone)", f.Pod)
	}
	return fmt.Sprintf("create NetworkPolicy %s/%s, which %s; recovery deletes it", f.Namespace, PartitionPolicyName(f.Pod), cut)
}

func (f *Partition) brokerPort() int32 {
	if f.BrokerPort != 0 {
		return f.BrokerPort
	}
	return DefaultBrokerPort
}

func (f *Partition) controllerPort() int32 {
	if f.ControllerPort != 0 {
		return f.ControllerPort
	}
	return DefaultControllerPort
}

// others returns the Kafka pods but the victim, sorted and without repeats.
func (f *Partition) others() []string {
	var out []string
	for _, p := range f.KafkaPods {
		if p != f.Pod {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// validate checks the fault's own fields; it makes no call.
func (f *Partition) validate() error {
	var errs []error
	if !slices.Contains(PartitionModes(), f.Mode) {
		errs = append(errs, fmt.Errorf("unknown mode %q (have %v)", f.Mode, PartitionModes()))
	}
	for _, p := range append([]string{f.Pod}, f.KafkaPods...) {
		if bad := append(validation.IsDNS1123Subdomain(p), validation.IsValidLabelValue(p)...); len(bad) > 0 {
			errs = append(errs, fmt.Errorf("pod name %q: %s", p, bad[0]))
		}
	}
	switch {
	case !slices.Contains(f.KafkaPods, f.Pod):
		errs = append(errs, fmt.Errorf("the victim %q is not one of the Kafka pods %v", f.Pod, f.KafkaPods))
	case len(f.others()) == 0:
		errs = append(errs, fmt.Errorf("no Kafka pod but the victim in %v: nothing to partition it from", f.KafkaPods))
	}
	for _, p := range []int32{f.brokerPort(), f.controllerPort()} {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("port %d out of range", p))
		}
	}
	if f.brokerPort() == f.controllerPort() {
		errs = append(errs, fmt.Errorf("broker and controller port are both %d", f.brokerPort()))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return nil
}

// Inject implements Fault. Bad fields are refused before any call; a Kafka
// pod whose PodNameLabel is not its name is refused before any change (the
// policy would miss it). A policy this run already created for the same
// victim and mode is left as it is.
func (f *Partition) Inject(ctx context.Context) error { return f.inject(ctx, f.validate(), f.look) }

func (f *Partition) look(ctx context.Context) (string, func(context.Context) error, error) {
	if _, err := f.pods(ctx); err != nil {
		return "", nil, err
	}
	return f.Plan(), f.create, nil
}

// create creates the policy, or finds it in place.
func (f *Partition) create(ctx context.Context) error {
	np, err := f.policy()
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	_, err = f.Client.NetworkingV1().NetworkPolicies(f.Namespace).Create(ctx, np, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = f.same(ctx, np.Name)
		if err == nil {
			f.say("%s: NetworkPolicy %s already in place", f.Name(), np.Name)
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.say("%s: created NetworkPolicy %s", f.Name(), np.Name)
	return nil
}

// same returns nil when the existing policy name is this fault's, from this
// run; otherwise an error that says whose it is.
func (f *Partition) same(ctx context.Context, name string) error {
	np, err := f.Client.NetworkingV1().NetworkPolicies(f.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	es, err := LedgerOf(np)
	if err != nil {
		return err
	}
	e, ok := entryOf(es, KindPartition)
	switch {
	case !ok:
		return fmt.Errorf("NetworkPolicy %s exists and is not a kafkachaos partition", name)
	case e.RunID != f.RunID || e.Data[dataMode] != string(f.Mode) || e.Data[dataPod] != f.Pod:
		return fmt.Errorf("NetworkPolicy %s already partitions pod %s (%s, %s); recover it first (kafkachaos recover)",
			name, e.Data[dataPod], e.Data[dataMode], e)
	}
	return nil
}

// pods returns the Kafka pods that exist, by name, after checking that each
// carries PodNameLabel with its name as value. The victim must exist.
func (f *Partition) pods(ctx context.Context) (map[string]*corev1.Pod, error) {
	list, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: %s: list pods: %w", f.Name(), err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if !slices.Contains(f.KafkaPods, p.Name) {
			continue
		}
		if v := p.Labels[PodNameLabel]; v != p.Name {
			return nil, fmt.Errorf("chaos: %s: pod %s has label %s=%q, not its name: the partition selects pods by it", f.Name(), p.Name, PodNameLabel, v)
		}
		out[p.Name] = p
	}
	if out[f.Pod] == nil {
		return nil, fmt.Errorf("chaos: %s: no pod %s", f.Name(), f.Pod)
	}
	return out, nil
}

// PartitionPolicyName is the name of the NetworkPolicy that partitions pod:
// kafkachaos-partition-<pod>, cut to 63 characters with a hash of pod at
// the end when longer.
func PartitionPolicyName(pod string) string {
	const limit = validation.DNS1123LabelMaxLength
	name := "kafkachaos-" + KindPartition + "-" + pod
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(pod))
	tag := hex.EncodeToString(sum[:4])
	return strings.TrimRight(name[:limit-len(tag)-1], "-.") + "-" + tag
}

// policy returns the NetworkPolicy of the fault, with its labels and ledger.
func (f *Partition) policy() (*networkingv1.NetworkPolicy, error) {
	name := PartitionPolicyName(f.Pod)
	ledger, err := json.Marshal([]Entry{{
		Fault: KindPartition, RunID: f.RunID, At: time.Now().UTC(),
		Undo: fmt.Sprintf("delete NetworkPolicy %s/%s", f.Namespace, name),
		Data: map[string]string{dataMode: string(f.Mode), dataPod: f.Pod},
	}})
	if err != nil {
		return nil, fmt.Errorf("encode ledger: %w", err)
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: f.Namespace,
			Labels:      map[string]string{managedByLabel: "kafkachaos", faultLabel: KindPartition},
			Annotations: map[string]string{LedgerAnnotation: string(ledger)},
		},
		Spec: f.spec(),
	}, nil
}

// spec is the policy of the mode. Its peers are pod names: "the others"
// (the Kafka pods but the victim), and "all but the others" (the victim
// itself, the namespace's other pods, with or without PodNameLabel, and
// every pod of every other namespace). No ipBlock, endPort or named port.
func (f *Partition) spec() networkingv1.NetworkPolicySpec {
	byName := func(op metav1.LabelSelectorOperator, pods []string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: PodNameLabel, Operator: op, Values: pods}}}
	}
	victim := metav1.LabelSelector{MatchLabels: map[string]string{PodNameLabel: f.Pod}}
	if f.Mode == PartitionClients {
		kafka := append([]string{f.Pod}, f.others()...)
		return networkingv1.NetworkPolicySpec{
			PodSelector: victim,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: byName(metav1.LabelSelectorOpIn, kafka)}}}},
		}
	}
	notOthers := []networkingv1.NetworkPolicyPeer{
		{PodSelector: byName(metav1.LabelSelectorOpNotIn, f.others())},
		{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{f.Namespace}},
		}}},
	}
	spec := networkingv1.NetworkPolicySpec{
		PodSelector: victim,
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: notOthers}},
		Egress:      []networkingv1.NetworkPolicyEgressRule{{To: notOthers}},
	}
	var open int32 // the one port left open between the victim and the others
	switch f.Mode {
	case PartitionPeersOnly:
		open = f.controllerPort()
	case PartitionController:
		open = f.brokerPort()
	}
	if open != 0 {
		tcp, port := corev1.ProtocolTCP, intstr.FromInt32(open)
		ports := []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}
		spec.Ingress = append(spec.Ingress, networkingv1.NetworkPolicyIngressRule{Ports: ports})
		spec.Egress = append(spec.Egress, networkingv1.NetworkPolicyEgressRule{Ports: ports})
	}
	return spec
}

// Recover implements Fault: it deletes the policy, if it is there and is a
// partition's.
func (f *Partition) Recover(ctx context.Context) error {
	// Only this fault's own policy: a refused Inject (another run's policy
	// in place) must not end the other run's partition.
	mine := func(e Entry) bool {
		return e.Fault == KindPartition && (f.RunID == "" || e.RunID == f.RunID) && e.Data[dataMode] == string(f.Mode) && e.Data[dataPod] == f.Pod
	}
	return f.recoverOn(ctx, f.Name(), Access{}, onNetworkPolicy, PartitionPolicyName(f.Pod), mine)
}

// partitionLedger is KindPartition's row of the registry: on the
// NetworkPolicy that makes the partition, recovered before the
// StatefulSets (moving partitions back needs the brokers reachable).
func partitionLedger() ledgerKind {
	return ledgerKind{kind: KindPartition, object: onNetworkPolicy, order: orderNetwork, undo: undoPartition}
}

// undoPartition deletes the policy, only if it is still the one read (a
// new one made in between is left alone).
func undoPartition(_ context.Context, u *undo, e Entry) (string, bool, error) {
	u.remove = true
	return fmt.Sprintf("delete, ending the %s partition of pod %s (%s)", e.Data[dataMode], e.Data[dataPod], e), false, nil
}
