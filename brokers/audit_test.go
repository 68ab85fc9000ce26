package brokers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

// auditKafka is a cluster whose brokers advertise hosts and run with
// configs.
type auditKafka struct {
	hosts   map[int32]string
	configs map[string]string
}

func (k auditKafka) BrokerConfigs(_ context.Context, _ int32, keys ...string) (map[string]string, error) {
	vals := map[string]string{}
	for _, key := range keys {
		if v, ok := k.configs[key]; ok {
			vals[key] = v
		}
	}
	return vals, nil
}

func (k auditKafka) BrokerHosts(context.Context) (map[int32]string, error) { return k.hosts, nil }

func safeConfigs() map[string]string {
	return map[string]string{
		"default.replication.factor": "3", "min.insync.replicas": "2", "unclean.leader.election.enable": "false",
		"offsets.topic.replication.factor": "3", "transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
	}
}

func auditPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, Labels: map[string]string{"app": "kafka"}}}
}

func auditPDBOf(maxUnavailable *intstr.IntOrString, minAvailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka", Namespace: testNS},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kafka"}},
			MaxUnavailable: maxUnavailable, MinAvailable: minAvailable,
		},
	}
}

func TestAudit(t *testing.T) {
	one, two, three, third := intstr.FromInt32(1), intstr.FromInt32(2), intstr.FromInt32(3), intstr.FromString("33%") // 33 % of 3 rounds up to 1, as the disruption controller does
	safeSnap := func() []Server {
		var bs []Server
		for i := range int32(3) {
			pod := fmt.Sprintf("kafka-%d", i)
			bs = append(bs, Server{ID: i, Pod: pod, Node: fmt.Sprintf("node-%d", i), Broker: true, Controller: true,
				Volumes: []Volume{{Claim: "data-" + pod, PV: "pv-" + pod}}})
		}
		return bs
	}
	safeHosts := func() map[int32]string {
		return map[int32]string{0: "kafka-0.kafka-headless.kafka.svc", 1: "kafka-1.kafka-headless.kafka.svc", 2: "kafka-2.kafka-headless.kafka.svc"}
	}
	tests := []struct {
		name    string
		snap    func([]Server) []Server
		pdb     *policyv1.PodDisruptionBudget
		configs func(map[string]string)
		hosts   func(map[int32]string)
		want    []string // substrings, each in some finding; none: no findings
	}{
		{name: "safe", pdb: auditPDBOf(&one, nil)},
		{name: "safe with minAvailable 2", pdb: auditPDBOf(nil, &two)},
		{name: "emptyDir data dir", pdb: auditPDBOf(&one, nil),
			snap: func(bs []Server) []Server { bs[1].Volumes, bs[1].Ephemeral = nil, []string{"emptyDir data"}; return bs },
			want: []string{"broker 1 (pod kafka-1): " + AuditStorage + ": want a PersistentVolumeClaim, got emptyDir data"}},
		{name: "no PDB", want: []string{"broker 0 (pod kafka-0): " + AuditPDB, "none: a node drain may evict several brokers"}},
		{name: "PDB too loose", pdb: auditPDBOf(&two, nil), want: []string{"kafka allows 2 brokers down at once"}},
		{name: "PDB allowing none", pdb: auditPDBOf(nil, &three), want: []string{"kafka allows none: a node drain blocks for ever"}},
		{name: "percent of the selected pods", pdb: auditPDBOf(&third, nil)},
		{name: "two brokers on one node", pdb: auditPDBOf(&one, nil),
			snap: func(bs []Server) []Server { bs[2].Node = "node-0"; return bs },
			want: []string{"node node-0: " + AuditSpread + ": want one broker per node, got kafka-0, kafka-2"}},
		{name: "replication too low", pdb: auditPDBOf(&one, nil),
			configs: func(c map[string]string) { c["default.replication.factor"], c["min.insync.replicas"] = "1", "1" },
			want:    []string{"want default.replication.factor >= 3, got default.replication.factor=1", "want min.insync.replicas >= 2, got min.insync.replicas=1"}},
		{name: "min ISR equal to RF", pdb: auditPDBOf(&one, nil),
			configs: func(c map[string]string) { c["min.insync.replicas"] = "3" },
			want:    []string{"min.insync.replicas=3 with default.replication.factor=3"}},
		{name: "unclean election", pdb: auditPDBOf(&one, nil),
			configs: func(c map[string]string) { c["unclean.leader.election.enable"] = "true" },
			want:    []string{"unclean.leader.election.enable=false"}},
		{name: "node IDs not from the pods", pdb: auditPDBOf(&one, nil),
			hosts: func(h map[int32]string) { h[7] = h[1]; delete(h, 1) },
			want:  []string{"broker 1 (pod kafka-1): " + AuditStableIDs + ": want node 1 registered in Kafka", "node 7: " + AuditStableIDs}},
		{name: "IDs swapped between pods", pdb: auditPDBOf(&one, nil),
			hosts: func(h map[int32]string) { h[1], h[2] = h[2], h[1] },
			want:  []string{"want node 1 advertised by pod kafka-1, got node 1 advertises kafka-2."}},
		{name: "advertised by hostname (Koperator)", pdb: auditPDBOf(&one, nil),
			snap: func(bs []Server) []Server {
				for i := range bs {
					bs[i].Hostname, bs[i].Pod = bs[i].Pod, bs[i].Pod+"-x7k2p"
				}
				return bs
			}},
		{name: "hostname of another pod", pdb: auditPDBOf(&one, nil),
			snap: func(bs []Server) []Server {
				for i := range bs {
					bs[i].Hostname, bs[i].Pod = bs[(i+1)%len(bs)].Pod, bs[i].Pod+"-x7k2p"
				}
				return bs
			},
			want: []string{"want node 0 advertised by pod kafka-0-x7k2p, got node 0 advertises kafka-0."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := safeSnap()
			if tt.snap != nil {
				snap = tt.snap(snap)
			}
			var objs []runtime.Object
			for _, b := range snap {
				objs = append(objs, auditPod(b.Pod))
			}
			if tt.pdb != nil {
				objs = append(objs, tt.pdb)
			}
			configs, hosts := safeConfigs(), safeHosts()
			if tt.configs != nil {
				tt.configs(configs)
			}
			if tt.hosts != nil {
				tt.hosts(hosts)
			}
			fs, err := Audit(t.Context(), fake.NewClientset(objs...), auditKafka{hosts, configs}, testNS, snap)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fs {
				got = append(got, f.String())
			}
			all := strings.Join(got, "\n")
			if len(tt.want) == 0 && len(fs) > 0 {
				t.Errorf("want no findings, got:\n%s", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no finding contains %q; findings:\n%s", w, all)
				}
			}
		})
	}
}
