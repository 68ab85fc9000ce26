package brokers

import (
	"slices"
	"strings"
	"testing"
)

func TestKoperatorDeployment(t *testing.T) {
	cluster := func(spec string) string {
		return "apiVersion: kafka.banzaicloud.io/v1beta1\nkind: KafkaCluster\nmetadata: {name: k, namespace: ns}\nspec:\n" + spec
	}
	listeners := `
  listenersConfig:
    internalListeners:
    - {type: plaintext, name: controller, containerPort: 29093, usedForControllerCommunication: true}
    - {type: ssl, name: secure, containerPort: 29094, usedForInnerBrokerCommunication: true}
    - {type: plaintext, name: clients, containerPort: 29092}
`
	tests := []struct {
		name                 string
		spec                 string
		brokers, controllers []int32
		service              string
		port                 int32
		wantErr              string
	}{
		{
			name: "roles from the group and the node, merged",
			spec: `
  kRaft: true
  brokerConfigGroups:
    b: {processRoles: [broker]}
    none: {}
  brokers:
  - {id: 5, brokerConfigGroup: b}
  - {id: 3, brokerConfigGroup: b, brokerConfig: {processRoles: [controller]}}
  - {id: 9, brokerConfigGroup: none, brokerConfig: {processRoles: [controller]}}
  - {id: 7, brokerConfig: {processRoles: [broker, controller]}}
` + listeners,
			brokers: []int32{3, 5, 7}, controllers: []int32{3, 7, 9}, service: "k-all-broker", port: 29092,
		},
		{
			name:    "ZooKeeper mode: every node a broker",
			spec:    "  kRaft: false\n  headlessServiceEnabled: true\n  brokers:\n  - {id: 0, brokerConfig: {processRoles: [controller]}}\n  - {id: 1}\n" + listeners,
			brokers: []int32{0, 1}, service: "k-headless", port: 29092,
		},
		{name: "missing group", spec: "  kRaft: true\n  brokers:\n  - {id: 0, brokerConfigGroup: nope}\n", wantErr: `brokerConfigGroup "nope" does not exist`},
		{name: "no roles in KRaft mode", spec: "  kRaft: true\n  brokers:\n  - {id: 4}\n", wantErr: "node 4 has no processRoles"},
		{name: "duplicate ID", spec: "  brokers:\n  - {id: 1}\n  - {id: 1}\n", wantErr: "node ID 1 is in spec.brokers twice"},
		{name: "bad ID", spec: "  brokers:\n  - {id: -1}\n", wantErr: "not an integer from 0"},
		{name: "no brokers", spec: "  kRaft: true\n", wantErr: "no spec.brokers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := KoperatorDeployment(object(t, cluster(tt.spec)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("KoperatorDeployment() = %s, %v; want an error containing %q", d, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Brokers, tt.brokers) || !slices.Equal(d.Controllers, tt.controllers) ||
				d.BootstrapService != tt.service || d.BootstrapPort != tt.port {
				t.Errorf("KoperatorDeployment() = %s, bootstrap %s:%d; want brokers %v, controllers %v, %s:%d",
					d, d.BootstrapService, d.BootstrapPort, tt.brokers, tt.controllers, tt.service, tt.port)
			}
		})
	}
}
