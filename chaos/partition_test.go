package chaos

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// kafkaCluster is namespace kafka (opted in or not) with pods kafka-0..2.
func kafkaCluster(ns string, allowed bool) fakeClient {
	n := plainNS(ns, nil)
	if allowed {
		n = allowedNS(ns)
	}
	return newClient(n, testPod(ns, "kafka-0", "node-1"), testPod(ns, "kafka-1", "node-1"), testPod(ns, "kafka-2", "node-1"))
}

func partitionOf(t Scope, mode PartitionMode) *Partition {
	return &Partition{Scope: t, Mode: mode, Pod: "kafka-1", KafkaPods: []string{"kafka-0", "kafka-1", "kafka-2"}}
}

// describePeers renders peers as "pods KEY OP [VALUES]" and "namespaces
// KEY OP [VALUES]", joined by " | ".
func describePeers(ps []networkingv1.NetworkPolicyPeer) string {
	var out []string
	sel := func(what string, s *metav1.LabelSelector) {
		if s == nil {
			return
		}
		for _, e := range s.MatchExpressions {
			out = append(out, fmt.Sprintf("%s %s %s %v", what, e.Key, e.Operator, e.Values))
		}
		if len(s.MatchLabels) > 0 {
			out = append(out, fmt.Sprintf("%s %v", what, s.MatchLabels))
		}
	}
	for _, p := range ps {
		if p.IPBlock != nil {
			out = append(out, "ipBlock")
		}
		sel("pods", p.PodSelector)
		sel("namespaces", p.NamespaceSelector)
	}
	return strings.Join(out, " | ")
}

// describePorts renders ports as "TCP/9093"; anything but a protocol and a
// numeric port shows.
func describePorts(ps []networkingv1.NetworkPolicyPort) string {
	var out []string
	for _, p := range ps {
		s := "no-protocol"
		if p.Protocol != nil {
			s = string(*p.Protocol)
		}
		switch {
		case p.Port == nil:
			s += "/any"
		case p.Port.Type != intstr.Int:
			s += "/named:" + p.Port.StrVal
		default:
			s += fmt.Sprint("/", p.Port.IntVal)
		}
		if p.EndPort != nil {
			s += "-endPort"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// describeSpec renders a policy as lines "select ...", "types ...", then
// per rule "ingress from PEERS ports PORTS" (each part when there is one),
// and the same for egress with "to".
func describeSpec(s networkingv1.NetworkPolicySpec) []string {
	out := []string{fmt.Sprintf("select %v%v", s.PodSelector.MatchLabels, s.PodSelector.MatchExpressions), fmt.Sprint("types ", s.PolicyTypes)}
	rule := func(dir, with string, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) string {
		line := dir
		if len(peers) > 0 {
			line += " " + with + " " + describePeers(peers)
		}
		if len(ports) > 0 {
			line += " ports " + describePorts(ports)
		}
		return line
	}
	for _, r := range s.Ingress {
		out = append(out, rule("ingress", "from", r.From, r.Ports))
	}
	for _, r := range s.Egress {
		out = append(out, rule("egress", "to", r.To, r.Ports))
	}
	return out
}

func TestPartitionPolicy(t *testing.T) {
	const (
		sel       = "select map[statefulset.kubernetes.io/pod-name:kafka-1][]"
		notOthers = "pods statefulset.kubernetes.io/pod-name NotIn [kafka-0 kafka-2] | namespaces kubernetes.io/metadata.name NotIn [kafka]"
		both      = "types [Ingress Egress]"
	)
	tests := []struct {
		mode           PartitionMode
		broker, ctrl   int32
		want           []string
		wantPlanSaying string
	}{
		{mode: PartitionIsolate, wantPlanSaying: "on every port; recovery",
			want: []string{sel, both, "ingress from " + notOthers, "egress to " + notOthers}},
		{mode: PartitionPeersOnly, wantPlanSaying: "but the controller port 9093",
			want: []string{sel, both, "ingress from " + notOthers, "ingress ports TCP/9093", "egress to " + notOthers, "egress ports TCP/9093"}},
		{mode: PartitionPeersOnly, ctrl: 19093, wantPlanSaying: "but the controller port 19093",
			want: []string{sel, both, "ingress from " + notOthers, "ingress ports TCP/19093",
				"egress to " + notOthers, "egress ports TCP/19093"}},
		{mode: PartitionController, wantPlanSaying: "but the broker port 9092",
			want: []string{sel, both, "ingress from " + notOthers, "ingress ports TCP/9092",
				"egress to " + notOthers, "egress ports TCP/9092"}},
		{mode: PartitionController, broker: 29092, wantPlanSaying: "but the broker port 29092",
			want: []string{sel, both, "ingress from " + notOthers, "ingress ports TCP/29092",
				"egress to " + notOthers, "egress ports TCP/29092"}},
		{mode: PartitionClients, wantPlanSaying: "lets only the Kafka pods reach pod kafka-1",
			want: []string{sel, "types [Ingress]", "ingress from pods statefulset.kubernetes.io/pod-name In [kafka-1 kafka-0 kafka-2]"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d %d", tt.mode, tt.broker, tt.ctrl), func(t *testing.T) {
			cs := kafkaCluster("kafka", true)
			f := partitionOf(Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, tt.mode)
			f.BrokerPort, f.ControllerPort = tt.broker, tt.ctrl
			if !strings.Contains(f.Plan(), tt.wantPlanSaying) {
				t.Errorf("plan %q does not say %q", f.Plan(), tt.wantPlanSaying)
			}
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := mutations(cs); !slices.Equal(got, []string{"create networkpolicies kafka/kafkachaos-partition-kafka-1"}) {
				t.Errorf("mutations %q, want the one create", got)
			}
			np, err := cs.NetworkingV1().NetworkPolicies("kafka").Get(t.Context(), "kafkachaos-partition-kafka-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := describeSpec(np.Spec); !slices.Equal(got, tt.want) {
				t.Errorf("policy\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if np.Labels["app.kubernetes.io/managed-by"] != "kafkachaos" || np.Labels["kafkachaos.io/fault"] != "partition" {
				t.Errorf("labels %v", np.Labels)
			}
			es := ledger(t, np)
			if len(es) != 1 || es[0].Fault != KindPartition || es[0].RunID != "r1" || es[0].At.IsZero() ||
				es[0].Data["mode"] != string(tt.mode) || es[0].Data["pod"] != "kafka-1" ||
				es[0].Undo != "delete NetworkPolicy kafka/kafkachaos-partition-kafka-1" {
				t.Errorf("ledger %+v", es)
			}
		})
	}
}

func TestPartitionDryRun(t *testing.T) {
	for _, mode := range PartitionModes() {
		t.Run(string(mode), func(t *testing.T) {
			cs := kafkaCluster("kafka", true)
			var out bytes.Buffer
			f := partitionOf(Scope{Client: cs, Namespace: "kafka", DryRun: true, Out: &out}, mode)
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			if m := mutations(cs); len(m) > 0 {
				t.Errorf("dry run made calls %v", m)
			}
			if !strings.Contains(out.String(), "dry-run: "+f.Plan()) {
				t.Errorf("output %q lacks the plan", out.String())
			}
		})
	}
}

func TestPartitionRefusals(t *testing.T) {
	unlabelled := testPod("split", "kafka-2", "node-1")
	unlabelled.Labels = nil
	tests := []struct {
		name     string
		edit     func(*Partition)
		noOptIn  bool
		noCalls  bool   // refused before any call
		wantSays string // in the error
	}{
		{name: "unknown mode", edit: func(f *Partition) { f.Mode = "sever" }, noCalls: true, wantSays: `unknown mode "sever"`},
		{name: "victim not a Kafka pod", edit: func(f *Partition) { f.Pod = "zk-0" }, noCalls: true, wantSays: `the victim "zk-0" is not one of the Kafka pods`},
		{name: "no other Kafka pod", edit: func(f *Partition) { f.KafkaPods = []string{"kafka-1", "kafka-1"} }, noCalls: true, wantSays: "nothing to partition it from"},
		{name: "same ports", edit: func(f *Partition) { f.BrokerPort = 9093 }, noCalls: true, wantSays: "both 9093"},
		{name: "port out of range", edit: func(f *Partition) { f.ControllerPort = -1 }, noCalls: true, wantSays: "port -1 out of range"},
		{name: "bad pod name", edit: func(f *Partition) { f.KafkaPods = append(f.KafkaPods, "Kafka_3") }, noCalls: true, wantSays: `pod name "Kafka_3"`},
		{name: "namespace not opted in", noOptIn: true, wantSays: "lacks the label kafkachaos.io/allow-disruption=true"},
		{name: "victim missing", edit: func(f *Partition) { f.Pod, f.KafkaPods = "kafka-5", append(f.KafkaPods, "kafka-5") }, wantSays: "no pod kafka-5"},
		{name: "a Kafka pod without the pod-name label", edit: func(f *Partition) { f.Namespace = "split" },
			wantSays: `pod kafka-2 has label statefulset.kubernetes.io/pod-name=""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := kafkaCluster("kafka", !tt.noOptIn)
			_ = cs.Tracker().Add(allowedNS("split"))
			_ = cs.Tracker().Add(testPod("split", "kafka-1", "node-1"))
			_ = cs.Tracker().Add(unlabelled)
			f := partitionOf(Scope{Client: cs, Namespace: "kafka"}, PartitionIsolate)
			if tt.edit != nil {
				tt.edit(f)
			}
			err := f.Inject(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.wantSays) {
				t.Fatalf("Inject = %v, want an error saying %q", err, tt.wantSays)
			}
			if tt.noCalls && len(cs.Actions()) > 0 {
				t.Errorf("calls before refusing bad input: %v", cs.Actions())
			}
			if m := mutations(cs); len(m) > 0 {
				t.Errorf("mutating calls %v", m)
			}
		})
	}
}

func TestPartitionIdempotent(t *testing.T) {
	cs := kafkaCluster("kafka", true)
	f := partitionOf(Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, PartitionPeersOnly)
	for range 2 {
		if err := f.Inject(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []*Partition{
		partitionOf(Scope{Client: cs, Namespace: "kafka", RunID: "r2"}, PartitionPeersOnly),
		partitionOf(Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, PartitionIsolate),
	} {
		err := other.Inject(t.Context())
		if err == nil || !strings.Contains(err.Error(), "already partitions pod kafka-1 (peers-only, partition of run r1") {
			t.Errorf("Inject of %s over the policy of r1 = %v", other.Name(), err)
		}
	}
	cs.ClearActions()
	var out bytes.Buffer
	f.Out = &out
	for range 2 {
		if err := f.Recover(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if got := mutations(cs); !slices.Equal(got, []string{"delete networkpolicies kafka/kafkachaos-partition-kafka-1"}) {
		t.Errorf("mutations %q, want one delete", got)
	}
	if !strings.HasPrefix(out.String(), "recovered networkpolicy kafka/kafkachaos-partition-kafka-1: delete, ending the peers-only partition of pod kafka-1 (partition of run r1 at ") {
		t.Errorf("narration %q", out.String())
	}
}

// A policy of ours by name but without a partition entry is not ours.
func TestPartitionLeavesForeignPolicy(t *testing.T) {
	cs := kafkaCluster("kafka", true)
	foreign := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafkachaos-partition-kafka-1"}}
	if err := cs.Tracker().Add(foreign); err != nil {
		t.Fatal(err)
	}
	f := partitionOf(Scope{Client: cs, Namespace: "kafka"}, PartitionIsolate)
	if err := f.Inject(t.Context()); err == nil || !strings.Contains(err.Error(), "not a kafkachaos partition") {
		t.Errorf("Inject = %v", err)
	}
	if err := f.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m := mutations(cs); len(m) != 1 || !strings.HasPrefix(m[0], "create ") {
		t.Errorf("mutations %q, want only the refused create", m)
	}
}

func TestRecoverAllPartitions(t *testing.T) {
	leftovers := func(t *testing.T) fakeClient {
		cs := kafkaCluster("kafka", true)
		if err := cs.Tracker().Add(allowedNS("other")); err != nil {
			t.Fatal(err)
		}
		for _, f := range []*Partition{
			{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Mode: PartitionIsolate, Pod: "kafka-0", KafkaPods: []string{"kafka-0", "kafka-1"}},
			{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r2"}, Mode: PartitionClients, Pod: "kafka-2", KafkaPods: []string{"kafka-1", "kafka-2"}},
		} {
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		unrelated := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "deny-all",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "kafkachaos", "kafkachaos.io/fault": "partition"}}}
		if err := cs.Tracker().Add(unrelated); err != nil {
			t.Fatal(err)
		}
		cs.ClearActions()
		return cs
	}
	const p0, p2 = "kafkachaos-partition-kafka-0", "kafkachaos-partition-kafka-2"
	tests := []struct {
		name       string
		namespaces []string
		runID      string
		dryRun     bool
		wantLines  []string // prefixes
		wantLeft   []string
	}{
		{name: "everything", wantLeft: []string{"deny-all"},
			wantLines: []string{"recovered networkpolicy kafka/" + p0 + ": delete, ending the isolate partition of pod kafka-0 (partition of run r1",
				"recovered networkpolicy kafka/" + p2 + ": delete, ending the clients partition of pod kafka-2 (partition of run r2"}},
		{name: "namespace kafka, run r2", namespaces: []string{"kafka"}, runID: "r2", wantLeft: []string{"deny-all", p0},
			wantLines: []string{"recovered networkpolicy kafka/" + p2}},
		{name: "another namespace", namespaces: []string{"other"}, wantLeft: []string{"deny-all", p0, p2}},
		{name: "dry run", dryRun: true, wantLeft: []string{"deny-all", p0, p2},
			wantLines: []string{"would recover networkpolicy kafka/" + p0, "would recover networkpolicy kafka/" + p2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := leftovers(t)
			recoverAll(t, cs, tt.namespaces, tt.runID, tt.dryRun, tt.wantLines)
			if m := mutations(cs); tt.dryRun && len(m) > 0 {
				t.Errorf("dry run made calls %v", m)
			}
			if left := policiesIn(t, cs, "kafka"); !slices.Equal(left, tt.wantLeft) {
				t.Errorf("policies left %q, want %q", left, tt.wantLeft)
			}
		})
	}
}

// policiesIn lists the names of the NetworkPolicies in namespace ns, sorted.
func policiesIn(t *testing.T, cs fakeClient, ns string) []string {
	t.Helper()
	list, err := cs.NetworkingV1().NetworkPolicies(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, np := range list.Items {
		out = append(out, np.Name)
	}
	slices.Sort(out)
	return out
}

func TestPartitionPolicyName(t *testing.T) {
	long := strings.Repeat("a", 40) + "-" + strings.Repeat("b", 22)
	tests := []struct{ pod, want string }{
		{"kafka-0", "kafkachaos-partition-kafka-0"},
		{"my-cluster-kafka-pool-a-0", "kafkachaos-partition-my-cluster-kafka-pool-a-0"},
		{long, ""},
		{long[:62] + "c", ""}, // the same cut, another hash
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := PartitionPolicyName(tt.pod)
		if tt.want != "" && got != tt.want {
			t.Errorf("PartitionPolicyName(%q) = %q, want %q", tt.pod, got, tt.want)
		}
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("PartitionPolicyName(%q) = %q: %v", tt.pod, got, errs)
		}
		if got != PartitionPolicyName(tt.pod) || seen[got] {
			t.Errorf("PartitionPolicyName(%q) = %q: not stable, or taken by another pod", tt.pod, got)
		}
		seen[got] = true
	}
}
