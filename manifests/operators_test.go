package manifests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

const hostnameKey = "kubernetes.io/hostname"

func TestOperatorExamplesDecode(t *testing.T) {
	for _, e := range OperatorExamples() {
		t.Run(e.Flavor, func(t *testing.T) {
			objs, err := e.Objects()
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				switch {
				case o.GetKind() == "Namespace":
					if o.GetName() != e.Namespace {
						t.Errorf("namespace %s, want %s", o.GetName(), e.Namespace)
					}
					if o.GetLabels()["kafkachaos.io/allow-disruption"] != "true" {
						t.Errorf("namespace %s does not opt in to disruption", o.GetName())
					}
				case o.GetNamespace() != e.Namespace:
					t.Errorf("%s %s is in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), e.Namespace)
				}
			}
			want := map[string][]string{"strimzi": {"Namespace", "Kafka", "KafkaNodePool"}, "koperator": {"Namespace", "KafkaCluster"}}[e.Flavor]
			for _, k := range want {
				if kinds[k] == 0 {
					t.Errorf("no %s in %s (kinds: %v)", k, e.File, kinds)
				}
			}
		})
	}
}

func TestOperatorExampleFor(t *testing.T) {
	for _, tt := range []struct {
		flavor, file string
		wantErr      bool
	}{
		{"strimzi", "operators/strimzi/kafka.yaml", false},
		{"koperator", "operators/koperator/kafkacluster.yaml", false},
		{"statefulset", "", true},
	} {
		t.Run(tt.flavor, func(t *testing.T) {
			e, err := OperatorExampleFor(tt.flavor)
			if (err != nil) != tt.wantErr || e.File != tt.file {
				t.Fatalf("OperatorExampleFor(%q) = %+v, %v; want file %q, error %t", tt.flavor, e, err, tt.file, tt.wantErr)
			}
		})
	}
}

// TestOperatorExamplesSafe checks the examples against the rules of the
// suite's audit (brokers/audit.go), as far as the custom resources tell:
// replication defaults, persistent storage, pool sizes, one broker per node,
// and a disruption budget of one.
func TestOperatorExamplesSafe(t *testing.T) {
	for _, e := range OperatorExamples() {
		t.Run(e.Flavor, func(t *testing.T) {
			objs, err := e.Objects()
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			switch e.Flavor {
			case "strimzi":
				problems = strimziProblems(objs, e.Cluster)
			case "koperator":
				problems = koperatorProblems(objs, e.Cluster)
			default:
				t.Fatalf("no safety check for flavor %q", e.Flavor)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// The checks below find problems in hand-written unsafe variants, so that
// TestOperatorExamplesSafe cannot pass by checking nothing.
func TestOperatorSafetyChecksFindProblems(t *testing.T) {
	tests := []struct {
		name, flavor, from, to string
		want                   string
	}{
		{"strimzi RF 2", "strimzi", "default.replication.factor: 3", "default.replication.factor: 2", "default.replication.factor=2"},
		{"strimzi min ISR 1", "strimzi", "min.insync.replicas: 2", "min.insync.replicas: 1", "min.insync.replicas=1"},
		{"strimzi ephemeral", "strimzi", "type: persistent-claim", "type: ephemeral", "not a persistent-claim"},
		{"strimzi deleteClaim", "strimzi", "deleteClaim: false", "deleteClaim: true", "deleteClaim"},
		{"strimzi 2 brokers", "strimzi", "replicas: 3\n  roles:\n  - broker", "replicas: 2\n  roles:\n  - broker", "2 brokers"},
		{"strimzi no anti-affinity", "strimzi", "topologyKey: kubernetes.io/hostname", "topologyKey: topology.kubernetes.io/zone", "anti-affinity"},
		{"strimzi TLS only", "strimzi", "tls: false", "tls: true", "plaintext"},
		{"koperator RF 1", "koperator", "default.replication.factor=3", "default.replication.factor=1", "default.replication.factor=1"},
		{"koperator unclean", "koperator", "unclean.leader.election.enable=false", "unclean.leader.election.enable=true", "unclean"},
		{"koperator no PDB", "koperator", "create: true", "create: false", "disruptionBudget"},
		{"koperator budget 2", "koperator", `budget: "1"`, `budget: "2"`, "budget"},
		{"koperator emptyDir", "koperator", "pvcSpec:", "emptyDir: {}\n        x:", "no pvcSpec"},
		{"koperator spread", "koperator", "oneBrokerPerNode: true", "oneBrokerPerNode: false", "oneBrokerPerNode"},
		{"koperator ZooKeeper", "koperator", "kRaft: true", "kRaft: false", "kRaft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := OperatorExampleFor(tt.flavor)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := e.Read()
			if err != nil {
				t.Fatal(err)
			}
			code := withoutComments(string(raw))
			if !strings.Contains(code, tt.from) {
				t.Fatalf("%s does not contain %q outside comments", e.File, tt.from)
			}
			objs, err := kube.Decode([]byte(strings.Replace(code, tt.from, tt.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			if tt.flavor == "strimzi" {
				problems = strimziProblems(objs, e.Cluster)
			} else {
				problems = koperatorProblems(objs, e.Cluster)
			}
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("problems %q; want one mentioning %q", problems, tt.want)
			}
		})
	}
}

// withoutComments drops the YAML comment lines of s.
func withoutComments(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// replicationProblems checks broker configs as brokers/audit.go does.
func replicationProblems(cfg map[string]string) []string {
	var ps []string
	atLeast := func(key string, want int) int {
		got, err := strconv.Atoi(cfg[key])
		if err != nil || got < want {
			ps = append(ps, fmt.Sprintf("config: want %s >= %d, got %s=%s", key, want, key, cfg[key]))
		}
		return got
	}
	rf := atLeast("default.replication.factor", 3)
	atLeast("offsets.topic.replication.factor", 3)
	atLeast("transaction.state.log.replication.factor", 3)
	isr := atLeast("min.insync.replicas", 2)
	atLeast("transaction.state.log.min.isr", 2)
	if isr >= rf {
		ps = append(ps, fmt.Sprintf("config: min.insync.replicas=%d not below default.replication.factor=%d", isr, rf))
	}
	if cfg["unclean.leader.election.enable"] == "true" {
		ps = append(ps, "config: unclean.leader.election.enable=true")
	}
	return ps
}

func strimziProblems(objs []*unstructured.Unstructured, cluster string) []string {
	var ps []string
	var kafka *unstructured.Unstructured
	var pools []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "Kafka" && o.GetName() == cluster:
			kafka = o
		case o.GetKind() == "KafkaNodePool" && o.GetLabels()["strimzi.io/cluster"] == cluster:
			pools = append(pools, o)
		}
	}
	if kafka == nil {
		return []string{"no Kafka " + cluster}
	}
	config, _, _ := unstructured.NestedMap(kafka.Object, "spec", "kafka", "config")
	cfg := map[string]string{}
	for k, v := range config {
		cfg[k] = fmt.Sprint(v)
	}
	ps = append(ps, replicationProblems(cfg)...)

	listeners, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
	if !slices.ContainsFunc(listeners, func(l any) bool {
		m, _ := l.(map[string]any)
		return m["type"] == "internal" && m["tls"] == false
	}) {
		ps = append(ps, "listeners: no internal plaintext listener for the suite's clients")
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(kafka.Object, "spec", "kafka", "template", "podDisruptionBudget", "maxUnavailable"); ok && fmt.Sprint(v) != "1" {
		ps = append(ps, fmt.Sprintf("podDisruptionBudget: maxUnavailable %v, want 1", v))
	}

	brokers, controllers := 0, 0
	for _, p := range pools {
		replicas, _, _ := unstructured.NestedFieldNoCopy(p.Object, "spec", "replicas")
		n, _ := strconv.Atoi(fmt.Sprint(replicas))
		roles, _, _ := unstructured.NestedStringSlice(p.Object, "spec", "roles")
		if slices.Contains(roles, "broker") {
			brokers += n
		}
		if slices.Contains(roles, "controller") {
			controllers += n
		}
		ps = append(ps, strimziStorageProblems(p)...)
		if !requiredAntiAffinity(p.Object, map[string]string{"strimzi.io/cluster": cluster, "strimzi.io/pool-name": p.GetName()},
			"spec", "template", "pod", "affinity") {
			ps = append(ps, fmt.Sprintf("pool %s: no required pod anti-affinity by %s over its own pods", p.GetName(), hostnameKey))
		}
	}
	if brokers < 3 {
		ps = append(ps, fmt.Sprintf("pools: %d brokers, want at least 3", brokers))
	}
	if controllers != 3 {
		ps = append(ps, fmt.Sprintf("pools: %d controllers, want 3", controllers))
	}
	return ps
}

// strimziStorageProblems checks that every volume of pool p is a
// persistent claim that outlives the node.
func strimziStorageProblems(p *unstructured.Unstructured) []string {
	storage, _, _ := unstructured.NestedMap(p.Object, "spec", "storage")
	volumes := []any{storage}
	if storage["type"] == "jbod" {
		volumes, _, _ = unstructured.NestedSlice(storage, "volumes")
	}
	if len(volumes) == 0 {
		return []string{fmt.Sprintf("pool %s: no storage", p.GetName())}
	}
	var ps []string
	for _, v := range volumes {
		m, _ := v.(map[string]any)
		if m["type"] != "persistent-claim" {
			ps = append(ps, fmt.Sprintf("pool %s: storage type %v, not a persistent-claim", p.GetName(), m["type"]))
		}
		if m["deleteClaim"] == true {
			ps = append(ps, fmt.Sprintf("pool %s: deleteClaim: true loses the volume with the node", p.GetName()))
		}
	}
	return ps
}

// requiredAntiAffinity says whether the affinity at path of obj has a
// required pod anti-affinity term by hostname whose matchLabels include
// every label of want.
func requiredAntiAffinity(obj map[string]any, want map[string]string, path ...string) bool {
	terms, _, _ := unstructured.NestedSlice(obj, append(path, "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")...)
	for _, term := range terms {
		m, _ := term.(map[string]any)
		if m["topologyKey"] != hostnameKey {
			continue
		}
		match, _, _ := unstructured.NestedStringMap(m, "labelSelector", "matchLabels")
		ok := true
		for k, v := range want {
			ok = ok && match[k] == v
		}
		if ok {
			return true
		}
	}
	return false
}

func koperatorProblems(objs []*unstructured.Unstructured, cluster string) []string {
	var kc *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "KafkaCluster" && o.GetName() == cluster {
			kc = o
		}
	}
	if kc == nil {
		return []string{"no KafkaCluster " + cluster}
	}
	spec, _, _ := unstructured.NestedMap(kc.Object, "spec")
	var ps []string
	if spec["kRaft"] != true {
		ps = append(ps, "spec.kRaft is not true")
	}
	if spec["oneBrokerPerNode"] != true {
		ps = append(ps, "spec.oneBrokerPerNode is not true")
	}
	if create, _, _ := unstructured.NestedBool(spec, "disruptionBudget", "create"); !create {
		ps = append(ps, "spec.disruptionBudget.create is not true: no PodDisruptionBudget")
	}
	if budget, _, _ := unstructured.NestedString(spec, "disruptionBudget", "budget"); budget != "1" {
		ps = append(ps, fmt.Sprintf("spec.disruptionBudget.budget %q, want \"1\"", budget))
	}
	if ft, _, _ := unstructured.NestedFieldNoCopy(spec, "rollingUpgradeConfig", "failureThreshold"); fmt.Sprint(ft) != "1" {
		ps = append(ps, fmt.Sprintf("spec.rollingUpgradeConfig.failureThreshold %v, want 1", ft))
	}

	readOnly, _, _ := unstructured.NestedString(spec, "readOnlyConfig")
	ps = append(ps, replicationProblems(properties(readOnly))...)

	listeners, _, _ := unstructured.NestedSlice(spec, "listenersConfig", "internalListeners")
	if !slices.ContainsFunc(listeners, func(l any) bool {
		m, _ := l.(map[string]any)
		return m["type"] == "plaintext" && m["usedForControllerCommunication"] != true
	}) {
		ps = append(ps, "listenersConfig: no internal plaintext listener for the suite's clients")
	}

	groups, _, _ := unstructured.NestedMap(spec, "brokerConfigGroups")
	nodes, _, _ := unstructured.NestedSlice(spec, "brokers")
	brokers, controllers := 0, 0
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		id := fmt.Sprint(node["id"])
		own, _ := node["brokerConfig"].(map[string]any)
		group, _ := groups[fmt.Sprint(node["brokerConfigGroup"])].(map[string]any)
		roles := append(stringsAt(own, "processRoles"), stringsAt(group, "processRoles")...)
		if slices.Contains(roles, "broker") {
			brokers++
		}
		if slices.Contains(roles, "controller") {
			controllers++
		}
		storage := append(slicesAt(own, "storageConfigs"), slicesAt(group, "storageConfigs")...)
		if len(storage) == 0 {
			ps = append(ps, fmt.Sprintf("node %s: no storageConfigs", id))
		}
		for _, s := range storage {
			if m, _ := s.(map[string]any); m["pvcSpec"] == nil {
				ps = append(ps, fmt.Sprintf("node %s: storage at %v has no pvcSpec: lost with the pod", id, m["mountPath"]))
			}
		}
		// A group's own affinity overrides oneBrokerPerNode: it must keep
		// the group's role one per node.
		for _, cfg := range []map[string]any{group, own} {
			if _, ok := cfg["affinity"]; !ok {
				continue
			}
			want := map[string]string{"app": "kafka", "kafka_cr": cluster}
			if slices.Contains(roles, "broker") {
				want["isBrokerNode"] = "true"
			} else {
				want["isControllerNode"] = "true"
			}
			if !requiredAntiAffinity(cfg, want, "affinity") {
				ps = append(ps, fmt.Sprintf("node %s: its affinity overrides oneBrokerPerNode without a required anti-affinity by %s over %v", id, hostnameKey, want))
			}
		}
	}
	if brokers < 3 {
		ps = append(ps, fmt.Sprintf("brokers: %d with the broker role, want at least 3", brokers))
	}
	if controllers != 3 {
		ps = append(ps, fmt.Sprintf("brokers: %d with the controller role, want 3", controllers))
	}
	return ps
}

// properties parses Java properties of the simple key=value form.
func properties(s string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

func stringsAt(m map[string]any, key string) []string {
	v, _, _ := unstructured.NestedStringSlice(m, key)
	return v
}

func slicesAt(m map[string]any, key string) []any {
	v, _, _ := unstructured.NestedSlice(m, key)
	return v
}
