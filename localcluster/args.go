package localcluster

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// controlPlane is what the control plane daemons' flags name: the state dir,
// the loopback ports, the PKI and the admin kubeconfig.
type controlPlane struct {
	stateDir   string
	kubeconfig string
	pki        pki
	ports      ports
}

// controlPlane returns what the daemons' flags name, with the ports p.
func (c *Cluster) controlPlane(p ports) controlPlane {
	return controlPlane{stateDir: c.dir, kubeconfig: c.KubeconfigPath(), pki: c.pki(), ports: p}
}

// loopbackURL returns scheme://host:port on the cluster's host.
func loopbackURL(scheme string, port int) string {
	return fmt.Sprintf("%s://%s:%d", scheme, host, port)
}

// etcdArgs returns etcd's flags: one member, its data under the state dir,
// serving plain HTTP on loopback.
func etcdArgs(cp controlPlane) []string {
	client, peer := loopbackURL("http", cp.ports.EtcdClient), loopbackURL("http", cp.ports.EtcdPeer)
	return []string{
		"--name", "kafkachaos",
		"--data-dir", filepath.Join(cp.stateDir, "etcd"),
		"--listen-client-urls", client,
		"--advertise-client-urls", client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "kafkachaos=" + peer,
		"--quota-backend-bytes", strconv.Itoa(2 << 30),
	}
}

// apiserverArgs returns kube-apiserver's flags: etcd as its store, the PKI's
// certificates for serving, for clients, for kubelets and for service
// accounts, and Node and RBAC authorization.
func apiserverArgs(cp controlPlane) []string {
	pk := cp.pki
	return []string{
		"--etcd-servers", loopbackURL("http", cp.ports.EtcdClient),
		"--bind-address", host,
		"--advertise-address", host,
		"--secure-port", strconv.Itoa(cp.ports.APIServer),
		"--endpoint-reconciler-type", "none",
		"--service-cluster-ip-range", ServiceCIDR,
		"--client-ca-file", pk.path(caCert),
		"--tls-cert-file", pk.path(apiserverCert),
		"--tls-private-key-file", pk.path(apiserverKey),
		"--kubelet-client-certificate", pk.path(adminCert),
		"--kubelet-client-key", pk.path(adminKey),
		"--kubelet-preferred-address-types", "InternalIP",
		"--service-account-issuer", "https://kubernetes.default.svc." + clusterDomain,
		"--service-account-key-file", pk.path(saPub),
		"--service-account-signing-key-file", pk.path(saKey),
		"--authorization-mode", "Node,RBAC",
		"--allow-privileged=true",
		"--profiling=false",
		"--audit-policy-file", filepath.Join(cp.stateDir, auditPolicyFile),
		"--audit-log-path", filepath.Join(cp.stateDir, auditLogFile),
		"--audit-log-maxsize", "100", // MiB, then one old file is kept
		"--audit-log-maxbackup", "1",
	}
}

// componentArgs returns the flags that kube-controller-manager and
// kube-scheduler share: the admin kubeconfig for everything, and serving on
// loopback at port.
func componentArgs(cp controlPlane, port int) []string {
	return []string{
		"--kubeconfig", cp.kubeconfig,
		"--authentication-kubeconfig", cp.kubeconfig,
		"--authorization-kubeconfig", cp.kubeconfig,
		"--bind-address", host,
		"--secure-port", strconv.Itoa(port),
	}
}

// controllerManagerArgs returns kube-controller-manager's flags: every
// controller but node IPAM, the PKI's CA for signing and service-account
// tokens, and no leader election.
func controllerManagerArgs(cp controlPlane) []string {
	pk := cp.pki
	return append(componentArgs(cp, cp.ports.Controllers),
		"--controllers", "*,-node-ipam-controller",
		"--service-account-private-key-file", pk.path(saKey),
		"--root-ca-file", pk.path(caCert),
		"--cluster-signing-cert-file", pk.path(caCert),
		"--cluster-signing-key-file", pk.path(caKey),
		"--use-service-account-credentials=true",
		"--leader-elect=false",
		"--profiling=false",
	)
}

// schedulerArgs returns kube-scheduler's flags: no leader election.
func schedulerArgs(cp controlPlane) []string {
	return append(componentArgs(cp, cp.ports.Scheduler),
		"--leader-elect=false",
		"--profiling=false",
	)
}

// agentArgs returns the arguments of the kafkachaos-node binary that runs
// the node agent: its state dir, how many nodes, the pinned Kafka jars and
// the Kafka cache if known, and each extra image mapping (in the map's
// order).
func (c *Cluster) agentArgs() []string {
	args := []string{"agent", "--state-dir", c.dir, "--nodes", strconv.Itoa(c.nodes)}
	if c.kafkaLibs != "" {
		args = append(args, "--kafka-libs", c.kafkaLibs)
	}
	if c.kafkaCache != "" {
		args = append(args, "--kafka-cache", c.kafkaCache)
	}
	for repo, prog := range c.images {
		args = append(args, "--image", repo+"="+prog)
	}
	return args
}
