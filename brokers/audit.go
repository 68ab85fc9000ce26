package brokers

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Finding is one reason a Kafka deployment cannot lose a broker pod (or a
// node) safely: what was checked on what, what a safe deployment has, and
// what this one has.
type Finding struct {
	Subject string // "broker 1 (pod kafka-1)", "namespace kafka", ...
	Check   string
	Want    string
	Got     string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: want %s, got %s", f.Subject, f.Check, f.Want, f.Got)
}

// Names of the audit's checks.
const (
	AuditStorage     = "data dir on a persistent volume"
	AuditPDB         = "covered by a PodDisruptionBudget allowing at most 1 broker down"
	AuditSpread      = "one broker per node"
	AuditReplication = "replication survives one broker down"
	AuditStableIDs   = "node ID stable with the pod"
)

// Kafka is what Audit asks of the Kafka cluster; a *kafkaadmin.Client
// answers it.
type Kafka interface {
	// BrokerConfigs returns the values of the config keys as broker id
	// runs with them.
	BrokerConfigs(ctx context.Context, id int32, keys ...string) (map[string]string, error)
	// BrokerHosts returns the host each registered broker advertises, by
	// node ID.
	BrokerHosts(ctx context.Context) (map[int32]string, error)
}

// safeReplicas is the replication factor a deployment of n brokers should
// default to: 3, or every broker when there are fewer.
func safeReplicas(n int) int { return min(3, n) }

// Audit checks that the deployment in snap (a Snapshot of namespace) can
// lose one broker pod without losing data, availability or identity:
//
//   - every broker's data dir is on a persistent volume (AuditStorage);
//   - a PodDisruptionBudget covers every broker pod and allows at most one
//     of them down (AuditPDB), so a drain cannot evict two;
//   - no two brokers share a node (AuditSpread);
//   - the brokers' defaults replicate: default.replication.factor,
//     offsets.topic.replication.factor and
//     transaction.state.log.replication.factor at least 3 (or the number of
//     brokers), min.insync.replicas and transaction.state.log.min.isr at
//     least 2 and below the replication factor, and no unclean leader
//     election (AuditReplication);
//   - each broker ID that Kafka has registered is carried by the pod that
//     advertises it, and every broker pod's ID is registered (AuditStableIDs).
//
// It returns every finding; an error only when it could not look.
func Audit(ctx context.Context, cs kubernetes.Interface, kafka Kafka, namespace string, snap []Server) ([]Finding, error) {
	var brokers []Server
	for _, b := range snap {
		if b.Broker {
			brokers = append(brokers, b)
		}
	}
	var fs []Finding
	fs = append(fs, auditStorage(snap)...)
	pdb, err := auditPDB(ctx, cs, namespace, snap)
	if err != nil {
		return nil, err
	}
	fs = append(fs, pdb...)
	fs = append(fs, auditSpread(brokers)...)
	repl, err := auditReplication(ctx, kafka, brokers)
	if err != nil {
		return nil, err
	}
	fs = append(fs, repl...)
	ids, err := auditIDs(ctx, kafka, brokers)
	if err != nil {
		return nil, err
	}
	return append(fs, ids...), nil
}

func auditStorage(snap []Server) []Finding {
	var fs []Finding
	for _, b := range snap {
		switch {
		case len(b.Ephemeral) > 0:
			fs = append(fs, Finding{b.Subject(), AuditStorage, "a PersistentVolumeClaim",
				fmt.Sprintf("%s, lost with the pod: the broker comes back empty", strings.Join(b.Ephemeral, ", "))})
		case len(b.Volumes) == 0:
			fs = append(fs, Finding{b.Subject(), AuditStorage, "a PersistentVolumeClaim", "no persistent volume at all"})
		}
	}
	return fs
}

func auditPDB(ctx context.Context, cs kubernetes.Interface, namespace string, snap []Server) ([]Finding, error) {
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("brokers: audit: list PodDisruptionBudgets in %s: %w", namespace, err)
	}
	podLabels := make([]labels.Set, len(snap))
	for i, b := range snap {
		pod, err := cs.CoreV1().Pods(namespace).Get(ctx, b.Pod, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("brokers: audit: %w", err)
		}
		podLabels[i] = pod.Labels
	}
	// selects[j] lists the snapshot's pods PDB j selects: the pod count
	// its maxUnavailable or minAvailable percentages are taken of.
	selects := make([][]int, len(pdbs.Items))
	for j, p := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		for i := range snap {
			if sel.Matches(podLabels[i]) {
				selects[j] = append(selects[j], i)
			}
		}
	}
	var fs []Finding
	for i, b := range snap {
		var covering []string
		allowed := math.MaxInt
		for j, p := range pdbs.Items {
			if slices.Contains(selects[j], i) {
				covering = append(covering, p.Name)
				allowed = min(allowed, disruptionsAllowed(&p, len(selects[j])))
			}
		}
		switch {
		case len(covering) == 0:
			fs = append(fs, Finding{b.Subject(), AuditPDB, "a PodDisruptionBudget with maxUnavailable 1",
				"none: a node drain may evict several brokers at once"})
		case allowed > 1:
			fs = append(fs, Finding{b.Subject(), AuditPDB, "at most 1 disruption",
				fmt.Sprintf("%s allows %d brokers down at once", strings.Join(covering, ", "), allowed)})
		case allowed < 1:
			fs = append(fs, Finding{b.Subject(), AuditPDB, "1 disruption allowed",
				fmt.Sprintf("%s allows none: a node drain blocks for ever", strings.Join(covering, ", "))})
		}
	}
	return fs, nil
}

// disruptionsAllowed is how many of n pods p lets be disrupted at once.
func disruptionsAllowed(p *policyv1.PodDisruptionBudget, n int) int {
	scaled := func(v *intstr.IntOrString, roundUp bool) int {
		x, err := intstr.GetScaledValueFromIntOrPercent(v, n, roundUp)
		if err != nil {
			return 0
		}
		return x
	}
	switch {
	case p.Spec.MaxUnavailable != nil:
		return scaled(p.Spec.MaxUnavailable, true)
	case p.Spec.MinAvailable != nil:
		return n - scaled(p.Spec.MinAvailable, true)
	}
	return n
}

func auditSpread(brokers []Server) []Finding {
	byNode := map[string][]string{}
	for _, b := range brokers {
		if b.Node != "" {
			byNode[b.Node] = append(byNode[b.Node], b.Pod)
		}
	}
	var fs []Finding
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		if pods := byNode[node]; len(pods) > 1 {
			fs = append(fs, Finding{"node " + node, AuditSpread, "one broker per node",
				fmt.Sprintf("%s: one node failure takes them all", strings.Join(pods, ", "))})
		}
	}
	return fs
}

func auditReplication(ctx context.Context, kafka Kafka, brokers []Server) ([]Finding, error) {
	if len(brokers) == 0 {
		return nil, nil
	}
	rf := safeReplicas(len(brokers))
	minISR := min(2, rf)
	var fs []Finding
	for _, b := range brokers {
		vals, err := kafka.BrokerConfigs(ctx, b.ID, "default.replication.factor", "min.insync.replicas", "unclean.leader.election.enable",
			"offsets.topic.replication.factor", "transaction.state.log.replication.factor", "transaction.state.log.min.isr")
		if err != nil {
			return nil, fmt.Errorf("brokers: audit: %w", err)
		}
		atLeast := func(key string, want int) {
			got, err := strconv.Atoi(vals[key])
			if err != nil || got < want {
				fs = append(fs, Finding{b.Subject(), AuditReplication, fmt.Sprintf("%s >= %d", key, want), fmt.Sprintf("%s=%s", key, vals[key])})
			}
		}
		atLeast("default.replication.factor", rf)
		atLeast("offsets.topic.replication.factor", rf)
		atLeast("transaction.state.log.replication.factor", rf)
		atLeast("min.insync.replicas", minISR)
		atLeast("transaction.state.log.min.isr", minISR)
		if isr, err := strconv.Atoi(vals["min.insync.replicas"]); err == nil {
			if def, err := strconv.Atoi(vals["default.replication.factor"]); err == nil && isr >= def && def > 1 {
				fs = append(fs, Finding{b.Subject(), AuditReplication, "min.insync.replicas below default.replication.factor",
					fmt.Sprintf("min.insync.replicas=%d with default.replication.factor=%d: one broker down stops acks=all producers", isr, def)})
			}
		}
		if vals["unclean.leader.election.enable"] == "true" {
			fs = append(fs, Finding{b.Subject(), AuditReplication, "unclean.leader.election.enable=false", "true: an out-of-sync replica may become leader and drop acknowledged records"})
		}
	}
	return fs, nil
}

// advertisedBy reports whether host names b's pod: its IP, or a DNS name
// under its pod name or its spec.hostname.
func advertisedBy(host string, b Server) bool {
	return host == b.PodIP || strings.HasPrefix(host, b.Pod+".") || (b.Hostname != "" && strings.HasPrefix(host, b.Hostname+"."))
}

func auditIDs(ctx context.Context, kafka Kafka, brokers []Server) ([]Finding, error) {
	hosts, err := kafka.BrokerHosts(ctx)
	if err != nil {
		return nil, fmt.Errorf("brokers: audit: %w", err)
	}
	var fs []Finding
	pods := map[int32]bool{}
	for _, b := range brokers {
		pods[b.ID] = true
		host, ok := hosts[b.ID]
		switch {
		case !ok:
			fs = append(fs, Finding{b.Subject(), AuditStableIDs, fmt.Sprintf("node %d registered in Kafka", b.ID),
				fmt.Sprintf("registered nodes %v: the broker's node ID is not derived from its pod", slices.Sorted(maps.Keys(hosts)))})
		case !advertisedBy(host, b):
			fs = append(fs, Finding{b.Subject(), AuditStableIDs, fmt.Sprintf("node %d advertised by pod %s", b.ID, b.Pod),
				fmt.Sprintf("node %d advertises %s", b.ID, host)})
		}
	}
	for id, host := range hosts {
		if !pods[id] {
			fs = append(fs, Finding{fmt.Sprintf("node %d", id), AuditStableIDs, "a broker pod carrying this ID",
				fmt.Sprintf("none (it advertises %s): node IDs are not derived from the pods", host)})
		}
	}
	slices.SortFunc(fs, func(a, b Finding) int { return strings.Compare(a.String(), b.String()) })
	return fs, nil
}
