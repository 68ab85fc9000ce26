package kubelet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/internal/pidfile"
	"github.com/kafkachaos/kafkachaos/localcluster/netpol"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/localcluster/serviceproxy"
	"github.com/kafkachaos/kafkachaos/localcluster/storage"
)

// Limits of starting the nodes.
const nodeReadyTimeout = 2 * time.Minute

// Config configures the agent.
type Config struct {
	// Client talks to the API server.
	Client kubernetes.Interface
	// Nodes is how many nodes to register; default 3.
	Nodes int
	// StateDir holds pod logs under pods/.
	StateDir string
	// Self is the kafkachaos-node binary that runs each container
	// (pod-exec) and the images' launchers; default this process's
	// executable.
	Self string
	// CLI is the kafkachaos binary that the project's image runs; default
	// the kafkachaos next to Self, else on PATH.
	CLI string
	// Ports are the nodes' kubelet API ports on 127.0.0.1, one per node.
	Ports []int
	// Images maps more image repositories (no tag) to host programs.
	Images map[string]string
	// KafkaLibs, if set, holds the Kafka jars that every apache/kafka image
	// runs, whatever its tag.
	KafkaLibs string
	// KafkaCache holds fetched Kafka versions (<dir>/<version>/libs); an
	// apache/kafka image runs the version its tag names.
	KafkaCache string
}

// Zones are the nodes' topology.kubernetes.io/zone labels, in turn.
var zones = [...]string{"zone-a", "zone-b", "zone-c"}

// NodeName returns the name of node i.
func NodeName(i int) string { return "kafkachaos-node-" + strconv.Itoa(i) }

// Run registers the nodes and runs their pods until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Client == nil {
		return errors.New("agent: no API client")
	}
	if len(cfg.Ports) != cfg.Nodes {
		return fmt.Errorf("agent: %d nodes need %d ports, got %d", cfg.Nodes, cfg.Nodes, len(cfg.Ports))
	}
	if cfg.Self == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		cfg.Self = self
	}
	if cfg.CLI == "" {
		cfg.CLI = findCLI(cfg.Self)
	}
	// Pod processes of an agent that crashed are killed, and its nftables
	// table and pod cgroups removed; this agent starts the pods again from
	// the API server's state.
	if err := Purge(cfg.StateDir); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	tlsCfg, err := selfSignedTLS()
	if err != nil {
		return err
	}
	// The dynamic provisioner: volumes are directories under the state dir.
	prov := &storage.Provisioner{Client: cfg.Client, Dir: filepath.Join(cfg.StateDir, "volumes")}
	provDone := make(chan error, 1)
	go func() { provDone <- prov.Run(ctx) }()
	hosts, err := newHostsFile(filepath.Join(cfg.StateDir, nodeagent.HostsPath))
	if err != nil {
		return err
	}
	go syncServices(ctx, cfg.Client, hosts)
	// Cluster IPs answer: forwarded to ready endpoints.
	go func() {
		logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "agent: "+f+"\n", a...) }
		if err := serviceproxy.Run(ctx, cfg.Client, logf); err != nil {
			logf("cluster IPs do not answer: %v", err)
		}
	}()
	// NetworkPolicy enforcement: its marking rule is in place before any
	// pod starts, so every pod connection is told apart.
	policies, err := netpol.Start(ctx, cfg.Client, cfg.StateDir)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := policies.Broken(); err != nil {
		fmt.Fprintf(os.Stderr, "agent: NetworkPolicy is not enforced on this host (each policy gets a NotEnforced event): %v\n", err)
	}
	ip := newIPAM()
	nodes := make([]*nodeutil.Node, cfg.Nodes)
	provs := make([]*provider, cfg.Nodes)
	for i := range cfg.Nodes {
		name := NodeName(i)
		prov := &provider{
			client: cfg.Client, node: name, ipam: ip, hosts: hosts,
			rt:     runtimes{node: cfg.Self, cli: cfg.CLI, kafkaLibs: cfg.KafkaLibs, kafkaCache: cfg.KafkaCache, extra: cfg.Images},
			podDir: filepath.Join(cfg.StateDir, "pods"), pods: map[string]*podRun{},
			cgroups: policies.Cgroups(), policiesChanged: policies.Kick,
		}
		provs[i] = prov
		mux := http.NewServeMux()
		n, err := nodeutil.NewNode(name,
			func(nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) { return prov, nil, nil },
			nodeutil.WithClient(statusOnly{cfg.Client}),
			nodeutil.AttachProviderRoutes(mux),
			func(c *nodeutil.NodeConfig) error {
				c.HTTPListenAddr = net.JoinHostPort(hostIP, strconv.Itoa(cfg.Ports[i]))
				c.Handler = mux
				c.TLSConfig = tlsCfg
				c.NumWorkers = 2
				describeNode(&c.NodeSpec, i, cfg.Ports[i])
				return nil
			},
		)
		if err != nil {
			return fmt.Errorf("agent: node %s: %w", name, err)
		}
		nodes[i] = n
		go func() { _ = n.Run(ctx) }()
	}
	for _, n := range nodes {
		if err := n.WaitReady(ctx, nodeReadyTimeout); err != nil {
			return fmt.Errorf("agent: node not ready: %w", err)
		}
	}
	<-ctx.Done()
	for _, n := range nodes {
		<-n.Done()
	}
	// The pods' processes end with the agent.
	for _, p := range provs {
		p.killAll()
	}
	if err := netpol.Purge(cfg.StateDir); err != nil {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
	}
	return <-provDone
}

// describeNode fills in what a kubelet reports: labels, capacity, address,
// and the kubelet endpoint the API server uses for logs.
func describeNode(n *corev1.Node, i, port int) {
	n.Labels["topology.kubernetes.io/zone"] = zones[i%len(zones)]
	n.Labels["kubernetes.io/os"] = "linux"
	n.Labels["kubernetes.io/arch"] = "amd64"
	n.Labels["kafkachaos.io/local-node"] = "true"
	res := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("50Gi"),
	}
	n.Status.Capacity, n.Status.Allocatable = res, res.DeepCopy()
	n.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: hostIP},
		{Type: corev1.NodeHostName, Address: n.Name},
	}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	n.Status.NodeInfo = corev1.NodeSystemInfo{
		OperatingSystem: "linux", Architecture: "amd64",
		KubeletVersion: "v1.37.2-kafkachaos", ContainerRuntimeVersion: "process://kafkachaos",
	}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }

// selfSignedTLS is the kubelet API's serving certificate. The API server
// does not verify kubelet certificates unless told a CA, and these listen on
// loopback only.
func selfSignedTLS() (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("agent: tls: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "kafkachaos-node"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP(hostIP)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("agent: tls: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
	}, nil
}

// Purge removes what an agent that crashed left behind in stateDir and on
// the host: it SIGKILLs every pod process recorded there that still runs,
// then removes the agent's nftables table and pod cgroups. Purging what is
// gone already succeeds.
func Purge(stateDir string) error {
	files, _ := filepath.Glob(filepath.Join(stateDir, "pods", "*", "*.pid"))
	for _, f := range files {
		pidfile.KillGroup(f)
	}
	return netpol.Purge(stateDir)
}

// cliName is the file name of the kafkachaos binary.
const cliName = "kafkachaos"

// findCLI returns the kafkachaos binary next to node (the kafkachaos-node
// binary), else the one on PATH, else "".
func findCLI(node string) string {
	// A path with a slash is tried as it is.
	for _, p := range []string{filepath.Join(filepath.Dir(node), cliName), cliName} {
		if found, err := exec.LookPath(p); err == nil {
			return found
		}
	}
	return ""
}

// serviceSyncEvery is how often service names are refreshed.
const serviceSyncEvery = time.Second

// syncServices keeps the hosts file's service entries current.
func syncServices(ctx context.Context, cs kubernetes.Interface, h *hostsFile) {
	t := time.NewTicker(serviceSyncEvery)
	defer t.Stop()
	for {
		if svcs, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{}); err == nil {
			_ = h.setServices(svcs.Items)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
