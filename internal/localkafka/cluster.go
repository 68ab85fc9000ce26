package localkafka

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
)

// NodeInfo describes one node of the cluster.
type NodeInfo struct {
	ID             int32
	Roles          string // KAFKA_PROCESS_ROLES: "broker,controller", "broker" or "controller"
	BrokerAddr     string // host:port of the broker listener; "" on a controller-only node
	ControllerAddr string // host:port of the controller listener; "" on a broker-only node
	Dir            string // holds server.properties, data/ and kafka.log
	PID            int    // the JVM's process ID, also its process group ID; 0 when not running
}

// IsBroker reports whether the node is a broker.
func (n NodeInfo) IsBroker() bool { return n.BrokerAddr != "" }

// IsController reports whether the node is a controller (a quorum voter).
func (n NodeInfo) IsController() bool { return n.ControllerAddr != "" }

type node struct {
	NodeInfo // PID unused: see proc

	opMu sync.Mutex // serializes Stop, Kill and Restart of this node
	env  map[string]string
	proc *process // guarded by Cluster.mu; nil when not running
}

func (n *node) propsPath() string { return filepath.Join(n.Dir, "server.properties") }
func (n *node) dataDir() string   { return filepath.Join(n.Dir, "data") }
func (n *node) logPath() string   { return filepath.Join(n.Dir, "kafka.log") }
func (n *node) pidPath() string   { return filepath.Join(n.Dir, "kafka.pid") }

// Cluster is a local KRaft Kafka cluster whose nodes are JVM processes on
// 127.0.0.1, each in its own process group. Close kills every process it
// started; on Linux the kernel also kills them if the Go process dies first.
type Cluster struct {
	cfg  config
	dist kafkadist.Dist

	mu      sync.Mutex
	nodes   []*node // brokers by ID, then controllers by ID
	dir     string
	ownDir  bool
	started bool
	closed  bool
	client  *kgo.Client // for health checks, made on first use
}

// New returns a cluster that Start will run. It checks the options and finds
// java and the Kafka jars; a missing jar directory is an error that wraps
// kafkadist.ErrNotFetched and says how to fetch it.
func New(opts ...Option) (*Cluster, error) {
	cfg := config{
		nodes:       DefaultNodes,
		version:     kafkadist.DefaultVersion,
		clusterID:   kafkaconfig.DefaultClusterID,
		env:         map[string]string{},
		stopTimeout: DefaultStopTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return nil, fmt.Errorf("localkafka: %w", err)
	}
	if cfg.nodes < 1 {
		return nil, fmt.Errorf("localkafka: WithNodes(%d): need at least one broker", cfg.nodes)
	}
	if cfg.controllers < 0 {
		return nil, fmt.Errorf("localkafka: WithSeparateControllers(%d): negative", cfg.controllers)
	}
	if cfg.stopTimeout <= 0 {
		return nil, fmt.Errorf("localkafka: WithStopTimeout(%v): must be positive", cfg.stopTimeout)
	}
	if err := kafkaconfig.ValidateClusterID(cfg.clusterID); err != nil {
		return nil, fmt.Errorf("localkafka: WithClusterID: %w", err)
	}

	var dist kafkadist.Dist
	var err error
	if cfg.libsDir != "" {
		dist, err = kafkadist.Open(cfg.version, cfg.libsDir)
	} else {
		dist, err = kafkadist.Find(cfg.version)
	}
	if err != nil {
		return nil, fmt.Errorf("localkafka: %w", err)
	}

	if cfg.java == "" {
		cfg.java = "java"
		if home := os.Getenv("JAVA_HOME"); home != "" {
			cfg.java = filepath.Join(home, "bin", "java")
		}
	}
	java, err := exec.LookPath(cfg.java)
	if err != nil {
		return nil, fmt.Errorf("localkafka: java (17 or newer) is needed to run Kafka: %w", err)
	}
	cfg.java = java
	return &Cluster{cfg: cfg, dist: dist}, nil
}

// node returns the node with id, or an error naming the IDs there are.
func (c *Cluster) node(id int32) (*node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("localkafka: cluster closed")
	}
	var ids []int32
	for _, n := range c.nodes {
		if n.ID == id {
			return n, nil
		}
		ids = append(ids, n.ID)
	}
	if !c.started {
		return nil, fmt.Errorf("localkafka: no node %d: the cluster is not started", id)
	}
	return nil, fmt.Errorf("localkafka: no node %d (nodes: %v)", id, ids)
}

// Bootstrap returns the brokers' addresses (host:port), for kgo.SeedBrokers.
// It is empty before Start.
func (c *Cluster) Bootstrap() []string {
	var addrs []string
	for _, n := range c.Nodes() {
		if n.IsBroker() {
			addrs = append(addrs, n.BrokerAddr)
		}
	}
	return addrs
}

// ClusterID returns the cluster ID that storage is formatted with.
func (c *Cluster) ClusterID() string { return c.cfg.clusterID }

// Dir returns the directory that holds the nodes' directories; "" before Start.
func (c *Cluster) Dir() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dir
}

// Nodes describes every node, brokers first, by ID. It is empty before Start.
func (c *Cluster) Nodes() []NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	infos := make([]NodeInfo, 0, len(c.nodes))
	for _, n := range c.nodes {
		info := n.NodeInfo
		if n.proc != nil && !n.proc.exited() {
			info.PID = n.proc.pid()
		}
		infos = append(infos, info)
	}
	return infos
}
