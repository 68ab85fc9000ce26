package brokers

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStrimziDeployment(t *testing.T) {
	kafka := `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: c, namespace: ns}
spec:
  kafka:
    listeners:
    - {name: tls, port: 9093, type: internal, tls: true}
    - {name: ext, port: 9094, type: nodeport, tls: false}
    - {name: plain, port: 9095, type: internal, tls: false}
`
	pool := func(name, cluster string, replicas int, roles, extra string) string {
		return "apiVersion: kafka.strimzi.io/v1\nkind: KafkaNodePool\nmetadata: {name: " + name + ", namespace: ns, labels: {strimzi.io/cluster: " + cluster + "}" + extra + "}\n" +
			"spec: {replicas: " + string(rune('0'+replicas)) + ", roles: [" + roles + "]}\n"
	}
	withStatus := func(p string, ids string) string { return p + "status: {nodeIds: [" + ids + "]}\n" }
	tests := []struct {
		name                 string
		kafka                string
		pools                []string
		brokers, controllers []int32
		port                 int32
		wantErr              string
	}{
		{
			name:    "default assignment in name order",
			pools:   []string{pool("ctrl", "c", 3, "controller", ""), pool("b", "c", 2, "broker", "")},
			brokers: []int32{0, 1}, controllers: []int32{2, 3, 4}, port: 9095,
		},
		{
			name:    "assigned IDs win, new pools fill the gaps",
			pools:   []string{withStatus(pool("a", "c", 4, "broker", ""), "0, 2, 7"), pool("z", "c", 3, "controller", "")},
			brokers: []int32{0, 2, 7}, controllers: []int32{1, 3, 4}, port: 9095,
		},
		{
			name:    "dual-role pool; other clusters' pools ignored",
			pools:   []string{pool("dual", "c", 3, "controller, broker", ""), withStatus(pool("x", "other", 3, "broker", ""), "0, 1, 2")},
			brokers: []int32{0, 1, 2}, controllers: []int32{0, 1, 2}, port: 9095,
		},
		{
			name:    "next-node-ids before the operator assigned",
			pools:   []string{pool("b", "c", 3, "broker", ", annotations: {strimzi.io/next-node-ids: '[10-20]'}")},
			wantErr: "strimzi.io/next-node-ids",
		},
		{
			name:    "next-node-ids after the operator assigned",
			pools:   []string{withStatus(pool("b", "c", 3, "broker", ", annotations: {strimzi.io/next-node-ids: '[10-20]'}"), "10, 11, 12")},
			brokers: []int32{10, 11, 12}, port: 9095,
		},
		{name: "no pools", pools: []string{pool("b", "other", 3, "broker", "")}, wantErr: "no KafkaNodePool labelled strimzi.io/cluster=c"},
		{name: "no roles", pools: []string{pool("b", "c", 3, "", "")}, wantErr: "KafkaNodePool b has no spec.roles"},
		{
			name:    "duplicate IDs",
			pools:   []string{withStatus(pool("a", "c", 2, "broker", ""), "0, 1"), withStatus(pool("b", "c", 2, "broker", ""), "1, 2")},
			wantErr: "node ID 1 is in KafkaNodePools a and b",
		},
		{
			name:    "no plaintext internal listener",
			kafka:   "apiVersion: kafka.strimzi.io/v1\nkind: Kafka\nmetadata: {name: c, namespace: ns}\nspec: {kafka: {listeners: [{name: tls, port: 9093, type: internal, tls: true}]}}\n",
			pools:   []string{pool("b", "c", 1, "broker", "")},
			brokers: []int32{0}, port: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := kafka
			if tt.kafka != "" {
				k = tt.kafka
			}
			var pools []*unstructured.Unstructured
			for _, p := range tt.pools {
				pools = append(pools, object(t, p))
			}
			d, err := StrimziDeployment(object(t, k), pools)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("StrimziDeployment() = %s, %v; want an error containing %q", d, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Brokers, tt.brokers) || !slices.Equal(d.Controllers, tt.controllers) || d.BootstrapPort != tt.port {
				t.Errorf("StrimziDeployment() = %s, port %d; want brokers %v, controllers %v, port %d", d, d.BootstrapPort, tt.brokers, tt.controllers, tt.port)
			}
			if (d.Bootstrap() == "") != (tt.port == 0) {
				t.Errorf("Bootstrap() = %q with port %d", d.Bootstrap(), tt.port)
			}
		})
	}
}
