// A file over 400 lines: the cluster's whole lifecycle (up, down, the
// crash clean-up) in one place; flags are in args.go, readiness in ready.go.

package localcluster

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/loopback"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

// Addresses and names of the local cluster.
const (
	host          = "127.0.0.1"
	clusterDomain = "cluster.local"
	// ServiceCIDR is the service cluster IP range: inside loopback, so that
	// nothing of the cluster's ever points off this machine.
	ServiceCIDR = "127.96.0.0/16"
	serviceIP   = "127.96.0.1" // the kubernetes service
	contextName = "kafkachaos-local"
)

// Client rate limits of the cluster's own clients (the node agent's too).
const (
	clientQPS   = 50
	clientBurst = 100
)

// KubernetesVersion is the release the control plane is built from
// (localcluster/build/go.mod).
const KubernetesVersion = "v1.37.2"

// Option configures a Cluster.
type Option func(*Cluster)

// WithStateDir sets the directory that holds the cluster's state (PKI, etcd
// data, logs, pid files, kubeconfig), overriding the default
// $HOME/.kafkachaos/local.
func WithStateDir(dir string) Option { return func(c *Cluster) { c.dir = dir } }

// WithBinDir sets where kube-apiserver, kube-controller-manager and
// kube-scheduler are, overriding the default .cache/k8s/<version>/bin of the
// repository (found from the current directory upwards).
func WithBinDir(dir string) Option { return func(c *Cluster) { c.binDir = dir } }

// WithNodes sets how many nodes the node agent registers, overriding the
// default of 3.
func WithNodes(n int) Option { return func(c *Cluster) { c.nodes = n } }

// WithAgentBinary sets the kafkachaos-node binary that runs the node agent
// (`kafkachaos-node agent`) and its pods' containers, overriding the
// default: the AgentBinaryName next to this program's executable, else the
// one on PATH. The agent runs the kafkachaos binary next to it for the
// project's image (else the one on PATH).
func WithAgentBinary(path string) Option { return func(c *Cluster) { c.agentBin = path } }

// WithImage maps an image repository (without tag) to a host program that
// the node agent runs for it; the project's own image and apache/kafka are
// mapped already.
func WithImage(repo, program string) Option {
	return func(c *Cluster) {
		if c.images == nil {
			c.images = map[string]string{}
		}
		c.images[repo] = program
	}
}

// WithLogf sets where progress lines go, overriding the default of none.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *Cluster) { c.logf = logf }
}

// Cluster is the embedded local Kubernetes cluster.
type Cluster struct {
	dir        string
	binDir     string
	nodes      int
	agentBin   string
	images     map[string]string
	kafkaLibs  string
	kafkaCache string
	logf       func(string, ...any)
}

// New returns the cluster whose state lives in the state dir. It starts
// nothing.
func New(opts ...Option) (*Cluster, error) {
	c := &Cluster{nodes: 3, logf: func(string, ...any) {}}
	for _, o := range opts {
		o(c)
	}
	if c.nodes < 1 || c.nodes > 32 {
		return nil, fmt.Errorf("localcluster: %d nodes: want 1 to 32", c.nodes)
	}
	if c.kafkaCache == "" {
		c.kafkaCache = kafkadist.CacheDir()
	}
	if c.dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("localcluster: no state dir: %w", err)
		}
		c.dir = filepath.Join(home, ".kafkachaos", "local")
	}
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	c.dir = dir
	return c, nil
}

// StateDir returns the directory of the cluster's state.
func (c *Cluster) StateDir() string { return c.dir }

// Resolver answers the cluster's names (pods, headless services) from the
// node agent's hosts file, for processes on the host.
func (c *Cluster) Resolver() nodeagent.Resolver {
	return nodeagent.Resolver{Path: filepath.Join(c.dir, nodeagent.HostsPath)}
}

// KubeconfigPath is where Up writes the admin kubeconfig.
func (c *Cluster) KubeconfigPath() string { return filepath.Join(c.dir, "kubeconfig") }

func (c *Cluster) pki() pki { return pki{dir: filepath.Join(c.dir, "pki")} }

// The daemons, in start order.
func (c *Cluster) etcd() daemon        { return daemon{"etcd", c.dir} }
func (c *Cluster) apiserver() daemon   { return daemon{"kube-apiserver", c.dir} }
func (c *Cluster) controllers() daemon { return daemon{"kube-controller-manager", c.dir} }
func (c *Cluster) scheduler() daemon   { return daemon{"kube-scheduler", c.dir} }

func (c *Cluster) agent() daemon { return daemon{"node-agent", c.dir} }

func (c *Cluster) daemons() []daemon {
	return []daemon{c.etcd(), c.apiserver(), c.controllers(), c.scheduler(), c.agent()}
}

// Images returns the extra image mappings given with WithImage.
func (c *Cluster) Images() map[string]string { return c.images }

// Nodes is how many nodes the agent registers.
func (c *Cluster) Nodes() int { return c.nodes }

// NodePorts returns the kubelet API port of each node.
func (c *Cluster) NodePorts() ([]int, error) {
	p, err := c.ports()
	return p.Nodes, err
}

// ports are the cluster's loopback ports, kept in the state dir so that a
// restarted cluster keeps its addresses and its kubeconfig stays valid.
type ports struct {
	EtcdClient  int   `json:"etcdClient"`
	EtcdPeer    int   `json:"etcdPeer"`
	APIServer   int   `json:"apiserver"`
	Controllers int   `json:"controllerManager"`
	Scheduler   int   `json:"scheduler"`
	Nodes       []int `json:"nodes"` // kubelet API port of each node
}

func (c *Cluster) ports() (ports, error) {
	path := filepath.Join(c.dir, "ports.json")
	var p ports
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &p); err == nil && p.APIServer != 0 && len(p.Nodes) == c.nodes {
			return p, nil
		}
	}
	free, err := loopback.FreePorts(5 + c.nodes)
	if err != nil {
		return p, err
	}
	p = ports{EtcdClient: free[0], EtcdPeer: free[1], APIServer: free[2], Controllers: free[3], Scheduler: free[4], Nodes: free[5:]}
	raw, _ := json.Marshal(p)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return p, fmt.Errorf("localcluster: %w", err)
	}
	return p, nil
}

// Up starts whatever part of the control plane is not running, and returns
// once the API server is ready and the controller manager and scheduler are
// healthy. It is idempotent. When it fails on a cluster none of whose
// daemons ran before, it stops what it started, so a failed start leaves
// no process behind.
func (c *Cluster) Up(ctx context.Context) error {
	// Checked before the clean-up of a failed start, which also needs it.
	if _, err := c.AgentBinary(); err != nil {
		return err
	}
	fresh := true
	for _, d := range c.daemons() {
		if _, ok := d.running(); ok {
			fresh = false
		}
	}
	err := c.up(ctx)
	if err != nil && fresh {
		// A fresh context: ctx may be what was cancelled.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopAfterFailedUp)
		defer cancel()
		if derr := c.Down(stopCtx, false); derr != nil {
			return errors.Join(err, fmt.Errorf("localcluster: stopping the failed start: %w", derr))
		}
	}
	return err
}

// stopAfterFailedUp bounds stopping the daemons of a start that failed.
const stopAfterFailedUp = time.Minute

func (c *Cluster) up(ctx context.Context) error {
	agentBin, err := c.AgentBinary()
	if err != nil {
		return err
	}
	bins, err := c.binaries()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	p, err := c.ports()
	if err != nil {
		return err
	}
	cp := c.controlPlane(p)
	if err := cp.pki.ensure(net.ParseIP(serviceIP)); err != nil {
		return err
	}
	if err := c.writeKubeconfig(p); err != nil {
		return err
	}
	if err := c.writeAuditPolicy(); err != nil {
		return err
	}

	if err := c.ensureRunning(c.etcd(), bins.etcd, etcdArgs(cp),
		"starting etcd on %s:%d", host, p.EtcdClient); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "etcd", loopbackURL("http", p.EtcdClient)+"/health", nil, etcdReadyTimeout); err != nil {
		return err
	}

	if err := c.ensureRunning(c.apiserver(), bins.apiserver, apiserverArgs(cp),
		"starting kube-apiserver %s on https://%s:%d", KubernetesVersion, host, p.APIServer); err != nil {
		return err
	}
	tlsCfg, err := c.adminTLS()
	if err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "kube-apiserver", loopbackURL("https", p.APIServer)+"/readyz", tlsCfg, apiserverReadyTimeout); err != nil {
		return err
	}

	if err := c.ensureRunning(c.controllers(), bins.controllers, controllerManagerArgs(cp),
		"starting kube-controller-manager"); err != nil {
		return err
	}
	if err := c.ensureRunning(c.scheduler(), bins.scheduler, schedulerArgs(cp),
		"starting kube-scheduler"); err != nil {
		return err
	}
	insecure := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed serving certs of our own components on loopback
	if err := c.waitHTTP(ctx, "kube-controller-manager", loopbackURL("https", p.Controllers)+"/healthz", insecure, componentReadyTimeout); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "kube-scheduler", loopbackURL("https", p.Scheduler)+"/healthz", insecure, componentReadyTimeout); err != nil {
		return err
	}
	if _, ok := c.agent().running(); !ok {
		// The agent first cleans up after one that crashed (its pods'
		// processes, nftables table and cgroups), then starts the pods
		// again from the API server's state.
		c.logf("starting the node agent: %d nodes", c.nodes)
		if _, err := c.agent().start(agentBin, c.agentArgs()...); err != nil {
			return err
		}
	}
	return c.waitNodesReady(ctx)
}

// ensureRunning starts d, running path with args, unless it is running
// already; it logs format and a before it starts d.
func (c *Cluster) ensureRunning(d daemon, path string, args []string, format string, a ...any) error {
	if _, ok := d.running(); ok {
		return nil
	}
	c.logf(format, a...)
	_, err := d.start(path, args...)
	return err
}

// Down stops every daemon of the cluster, the last started first. With purge
// it also deletes the state dir. Stopping a cluster that is not running
// succeeds.
func (c *Cluster) Down(ctx context.Context, purge bool) error {
	var errs []error
	ds := c.daemons()
	for i := len(ds) - 1; i >= 0; i-- {
		if _, ok := ds[i].running(); ok {
			c.logf("stopping %s", ds[i].name)
		}
		if err := ds[i].stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	// What an agent that crashed may have left behind.
	if err := c.purgeAgent(ctx); err != nil {
		errs = append(errs, err)
	}
	if purge && len(errs) == 0 {
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("localcluster: purge: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ComponentStatus is one daemon's state.
type ComponentStatus struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Log     string `json:"log"`
}

// StopAPIServer stops kube-apiserver alone, as a control-plane outage
// does: every client of the cluster, the node agent's among them, is then
// refused until Up starts it again on the same port, with the same state
// in etcd.
func (c *Cluster) StopAPIServer(ctx context.Context) error {
	c.logf("stopping kube-apiserver")
	return c.apiserver().stop(ctx)
}

// StopEtcd stops etcd alone: kube-apiserver stays up, but can serve
// nothing that needs etcd, until Up starts it again with the same data.
func (c *Cluster) StopEtcd(ctx context.Context) error {
	c.logf("stopping etcd")
	return c.etcd().stop(ctx)
}

// Status reports which daemons are running.
func (c *Cluster) Status() []ComponentStatus {
	var out []ComponentStatus
	for _, d := range c.daemons() {
		pid, ok := d.running()
		out = append(out, ComponentStatus{Name: d.name, Running: ok, PID: pid, Log: d.logFile()})
	}
	return out
}

// NodeAgentStarted returns when the running node agent started (its pid
// file's time). Every pod status it reports is stamped at or after it, so a
// wait on a cluster brought up again from kept state can tell fresh
// readiness from what etcd held from before (kube.Wait.Since).
func (c *Cluster) NodeAgentStarted() (time.Time, error) {
	d := c.agent()
	if _, ok := d.running(); !ok {
		return time.Time{}, fmt.Errorf("localcluster: the node agent is not running (log: %s)", d.logFile())
	}
	st, err := os.Stat(d.pidFile())
	if err != nil {
		return time.Time{}, fmt.Errorf("localcluster: node agent: %w", err)
	}
	return st.ModTime(), nil
}

// RESTConfig returns a client config for the admin user.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath())
	if err != nil {
		return nil, fmt.Errorf("localcluster: kubeconfig: %w", err)
	}
	// client-go's default of 5 requests/s throttles the node agent, whose
	// nodes share one client for leases, node and pod statuses.
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	return cfg, nil
}

// Clientset returns a clientset for the admin user.
func (c *Cluster) Clientset() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

func (c *Cluster) writeKubeconfig(p ports) error {
	pk := c.pki()
	ca, err := os.ReadFile(pk.path(caCert))
	if err != nil {
		return fmt.Errorf("localcluster: kubeconfig: %w", err)
	}
	cert, err := os.ReadFile(pk.path(adminCert))
	if err != nil {
		return fmt.Errorf("localcluster: kubeconfig: %w", err)
	}
	key, err := os.ReadFile(pk.path(adminKey))
	if err != nil {
		return fmt.Errorf("localcluster: kubeconfig: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://%s:%d", host, p.APIServer),
		CertificateAuthorityData: ca,
	}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	if err := clientcmd.WriteToFile(*cfg, c.KubeconfigPath()); err != nil {
		return fmt.Errorf("localcluster: kubeconfig: %w", err)
	}
	return nil
}

func (c *Cluster) adminTLS() (*tls.Config, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return rest.TLSConfigFor(cfg)
}
