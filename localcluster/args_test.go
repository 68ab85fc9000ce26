package localcluster

import (
	"slices"
	"testing"
)

// TestDaemonArgs compares each daemon's flags with the list it must be,
// written out in full.
func TestDaemonArgs(t *testing.T) {
	cp := controlPlane{
		stateDir:   "/state",
		kubeconfig: "/state/kubeconfig",
		pki:        pki{dir: "/state/pki"},
		ports:      ports{EtcdClient: 2379, EtcdPeer: 2380, APIServer: 6443, Controllers: 10257, Scheduler: 10259, Nodes: []int{10250}},
	}
	tests := []struct {
		name string
		args func(controlPlane) []string
		want []string
	}{
		{
			name: "etcd",
			args: etcdArgs,
			want: []string{
				"--name", "kafkachaos",
				"--data-dir", "/state/etcd",
				"--listen-client-urls", "http://127.0.0.1:2379",
				"--advertise-client-urls", "http://127.0.0.1:2379",
				"--listen-peer-urls", "http://127.0.0.1:2380",
				"--initial-advertise-peer-urls", "http://127.0.0.1:2380",
				"--initial-cluster", "kafkachaos=http://127.0.0.1:2380",
				"--quota-backend-bytes", "2147483648",
			},
		},
		{
			name: "kube-apiserver",
			args: apiserverArgs,
			want: []string{
				"--etcd-servers", "http://127.0.0.1:2379",
				"--bind-address", "127.0.0.1",
				"--advertise-address", "127.0.0.1",
				"--secure-port", "6443",
				"--endpoint-reconciler-type", "none",
				"--service-cluster-ip-range", "127.96.0.0/16",
				"--client-ca-file", "/state/pki/ca.crt",
				"--tls-cert-file", "/state/pki/apiserver.crt",
				"--tls-private-key-file", "/state/pki/apiserver.key",
				"--kubelet-client-certificate", "/state/pki/admin.crt",
				"--kubelet-client-key", "/state/pki/admin.key",
				"--kubelet-preferred-address-types", "InternalIP",
				"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
				"--service-account-key-file", "/state/pki/sa.pub",
				"--service-account-signing-key-file", "/state/pki/sa.key",
				"--authorization-mode", "Node,RBAC",
				"--allow-privileged=true",
				"--profiling=false",
				"--audit-policy-file", "/state/audit-policy.yaml",
				"--audit-log-path", "/state/audit.log",
				"--audit-log-maxsize", "100",
				"--audit-log-maxbackup", "1",
			},
		},
		{
			name: "kube-controller-manager",
			args: controllerManagerArgs,
			want: []string{
				"--kubeconfig", "/state/kubeconfig",
				"--authentication-kubeconfig", "/state/kubeconfig",
				"--authorization-kubeconfig", "/state/kubeconfig",
				"--bind-address", "127.0.0.1",
				"--secure-port", "10257",
				"--controllers", "*,-node-ipam-controller",
				"--service-account-private-key-file", "/state/pki/sa.key",
				"--root-ca-file", "/state/pki/ca.crt",
				"--cluster-signing-cert-file", "/state/pki/ca.crt",
				"--cluster-signing-key-file", "/state/pki/ca.key",
				"--use-service-account-credentials=true",
				"--leader-elect=false",
				"--profiling=false",
			},
		},
		{
			name: "kube-scheduler",
			args: schedulerArgs,
			want: []string{
				"--kubeconfig", "/state/kubeconfig",
				"--authentication-kubeconfig", "/state/kubeconfig",
				"--authorization-kubeconfig", "/state/kubeconfig",
				"--bind-address", "127.0.0.1",
				"--secure-port", "10259",
				"--leader-elect=false",
				"--profiling=false",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.args(cp); !slices.Equal(got, tt.want) {
				t.Errorf("%s args =\n%q\nwant\n%q", tt.name, got, tt.want)
			}
		})
	}
}

// TestAgentArgs compares the node agent's arguments with the list they must
// be, for a cluster with and without Kafka jars and an extra image.
func TestAgentArgs(t *testing.T) {
	tests := []struct {
		name    string
		cluster Cluster
		want    []string
	}{
		{
			name:    "defaults",
			cluster: Cluster{dir: "/state", nodes: 3},
			want:    []string{"agent", "--state-dir", "/state", "--nodes", "3"},
		},
		{
			name:    "kafka libs and an image",
			cluster: Cluster{dir: "/state", nodes: 1, kafkaLibs: "/kafka/libs", images: map[string]string{"example/app": "/bin/app"}},
			want: []string{
				"agent", "--state-dir", "/state", "--nodes", "1",
				"--kafka-libs", "/kafka/libs",
				"--image", "example/app=/bin/app",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cluster.agentArgs(); !slices.Equal(got, tt.want) {
				t.Errorf("agentArgs() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestControlPlane checks that a cluster's daemons name its state dir's
// kubeconfig and PKI.
func TestControlPlane(t *testing.T) {
	c := &Cluster{dir: "/state"}
	p := ports{APIServer: 6443}
	got := c.controlPlane(p)
	want := controlPlane{stateDir: "/state", kubeconfig: "/state/kubeconfig", pki: pki{dir: "/state/pki"}, ports: p}
	if got.stateDir != want.stateDir || got.kubeconfig != want.kubeconfig || got.pki != want.pki || got.ports.APIServer != want.ports.APIServer {
		t.Errorf("controlPlane() = %+v, want %+v", got, want)
	}
}
