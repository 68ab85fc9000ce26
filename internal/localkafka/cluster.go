package localkafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/loopback"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Polling and waiting limits.
const (
	healthPollInterval = 500 * time.Millisecond
	// healthCheckTimeout bounds one health check, so that one request to a
	// dead broker cannot use up all of WaitHealthy's time.
	healthCheckTimeout = 5 * time.Second
	// killWait bounds the wait for a SIGKILLed process to be reaped.
	killWait = 10 * time.Second
	// failureLogLines is how much of a node's log an error about it quotes.
	failureLogLines = 20
)

// Listener names in every node's config.
const (
	brokerListener     = "PLAINTEXT"
	controllerListener = "CONTROLLER"
	host               = "127.0.0.1"
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

// Start creates the nodes' directories and configs, formats each node's
// storage unless it already holds meta.properties, and starts every node.
// It returns once the JVMs are running; WaitHealthy waits for the cluster
// to be ready. If Start fails, Close still cleans up what it started.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.closed || c.started {
		c.mu.Unlock()
		return errors.New("localkafka: Start called on a cluster that was already started or closed")
	}
	c.started = true
	c.mu.Unlock()

	if err := c.prepare(); err != nil {
		return err
	}
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = c.format(ctx, n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, n := range c.nodes {
		if err := c.startNode(n); err != nil {
			return err
		}
	}
	return nil
}

// prepare makes the directories, picks the ports and writes every node's
// server.properties and the log4j2 config.
func (c *Cluster) prepare() error {
	dir := c.cfg.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "localkafka-")
		if err != nil {
			return fmt.Errorf("localkafka: %w", err)
		}
		dir = tmp
		c.mu.Lock()
		c.ownDir = true
		c.mu.Unlock()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("localkafka: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("localkafka: %w", err)
	}

	log4j := c.cfg.log4jConfig
	if log4j == "" {
		log4j = filepath.Join(dir, "log4j2.properties")
		if err := os.WriteFile(log4j, []byte(kafkadist.BrokerLog4j2()), 0o644); err != nil {
			return fmt.Errorf("localkafka: writing log4j2 config: %w", err)
		}
	}

	var nodes []*node
	for i := range c.cfg.nodes {
		roles := "broker"
		if c.cfg.controllers == 0 {
			roles = "broker,controller"
		}
		nodes = append(nodes, &node{NodeInfo: NodeInfo{ID: int32(i), Roles: roles}})
	}
	for i := range c.cfg.controllers {
		nodes = append(nodes, &node{NodeInfo: NodeInfo{ID: int32(ControllerIDBase + i), Roles: "controller"}})
	}
	nports := 0
	for _, n := range nodes {
		nports += strings.Count(n.Roles, ",") + 1
	}
	ports, err := loopback.FreePorts(nports)
	if err != nil {
		return err
	}
	var voters []string
	for _, n := range nodes {
		n.Dir = filepath.Join(dir, fmt.Sprintf("node-%d", n.ID))
		if strings.Contains(n.Roles, "broker") {
			n.BrokerAddr, ports = net.JoinHostPort(host, strconv.Itoa(ports[0])), ports[1:]
		}
		if strings.Contains(n.Roles, "controller") {
			n.ControllerAddr, ports = net.JoinHostPort(host, strconv.Itoa(ports[0])), ports[1:]
			voters = append(voters, fmt.Sprintf("%d@%s", n.ID, n.ControllerAddr))
		}
	}
	for _, n := range nodes {
		n.env = c.nodeEnv(n, strings.Join(voters, ","), log4j)
		if err := writeConfig(n); err != nil {
			return err
		}
	}

	c.mu.Lock()
	c.dir, c.nodes = dir, nodes
	c.mu.Unlock()
	return nil
}

// nodeEnv returns n's environment, as a Kubernetes pod of the apache/kafka
// image would have it.
func (c *Cluster) nodeEnv(n *node, voters, log4j string) map[string]string {
	rf := min(3, c.cfg.nodes)
	minISR := max(1, min(2, rf-1))
	env := map[string]string{
		"CLUSTER_ID":                           c.cfg.clusterID,
		"KAFKA_NODE_ID":                        strconv.Itoa(int(n.ID)),
		"KAFKA_PROCESS_ROLES":                  n.Roles,
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": controllerListener + ":PLAINTEXT," + brokerListener + ":PLAINTEXT",
		"KAFKA_CONTROLLER_LISTENER_NAMES":      controllerListener,
		"KAFKA_CONTROLLER_QUORUM_VOTERS":       voters,
		"KAFKA_LOG_DIRS":                       n.dataDir(),

		// Test-friendly replication: every internal topic as durable as a
		// user topic, with fewer partitions than Kafka's 50 so that a
		// first consumer group or transaction on 2 cores is quick.
		"KAFKA_DEFAULT_REPLICATION_FACTOR":                       strconv.Itoa(rf),
		"KAFKA_MIN_INSYNC_REPLICAS":                              strconv.Itoa(minISR),
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":                 strconv.Itoa(rf),
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS":                     "10",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR":         strconv.Itoa(rf),
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":                    strconv.Itoa(minISR),
		"KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS":             "10",
		"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": strconv.Itoa(rf),
		"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR":            strconv.Itoa(minISR),
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":                 "0",
		// A killed broker is fenced (and leaves every ISR) after 6 s
		// instead of 9 s. Restarts stay clean: SIGTERM runs a controlled
		// shutdown (controlled.shutdown.enable, on by default), which moves
		// leadership away first, so Stop and Restart leave no partition
		// without a leader and the restarted node skips log recovery.
		"KAFKA_BROKER_HEARTBEAT_INTERVAL_MS": "1000",
		"KAFKA_BROKER_SESSION_TIMEOUT_MS":    "6000",

		// JVM: three of these fit two cores and a small heap.
		"KAFKA_HEAP_OPTS":  DefaultHeapOpts,
		"KAFKA_LOG4J_OPTS": "-Dlog4j2.configurationFile=" + log4j,
	}
	if jsa := c.dist.SharedArchive(); jsa != "" {
		// As the image's launch script adds its kafka.jsa: the start-up
		// takes about 40% less CPU.
		env["KAFKA_JVM_PERFORMANCE_OPTS"] = kafkaconfig.DefaultJVMPerformanceOpts + " -XX:SharedArchiveFile=" + jsa
	}
	var listeners []string
	if n.BrokerAddr != "" {
		listeners = append(listeners, brokerListener+"://"+n.BrokerAddr)
		env["KAFKA_ADVERTISED_LISTENERS"] = brokerListener + "://" + n.BrokerAddr
		env["KAFKA_INTER_BROKER_LISTENER_NAME"] = brokerListener
	}
	if n.ControllerAddr != "" {
		listeners = append(listeners, controllerListener+"://"+n.ControllerAddr)
	}
	env["KAFKA_LISTENERS"] = strings.Join(listeners, ",")
	for k, v := range c.cfg.env {
		env[k] = v
	}
	return env
}

// writeConfig renders n's environment to n's server.properties.
func writeConfig(n *node) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	props, err := kafkaconfig.Render(n.env)
	if err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	if err := os.WriteFile(n.propsPath(), []byte(props.String()), 0o644); err != nil {
		return fmt.Errorf("localkafka: node %d: writing server.properties: %w", n.ID, err)
	}
	return nil
}

// format formats n's storage with the cluster ID, unless it already holds
// meta.properties.
func (c *Cluster) format(ctx context.Context, n *node) error {
	if _, err := os.Stat(filepath.Join(n.dataDir(), "meta.properties")); err == nil {
		return nil
	}
	clusterID, err := kafkaconfig.ClusterID(n.env)
	if err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	logf, err := openLog(n, "formatting storage")
	if err != nil {
		return err
	}
	defer logf.Close()
	// A short-lived tool: the C1 compiler alone and the shared archive
	// make it start faster.
	args := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1", n.env["KAFKA_LOG4J_OPTS"]}
	if jsa := c.dist.SharedArchive(); jsa != "" {
		args = append(args, "-XX:SharedArchiveFile="+jsa)
	}
	args = append(args, "-cp", c.dist.Classpath(),
		kafkadist.StorageToolClass, "format", "--cluster-id="+clusterID, "-c", n.propsPath())
	cmd := exec.CommandContext(ctx, c.cfg.java, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = n.Dir, logf, logf
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("localkafka: node %d: formatting storage: %w\n%s", n.ID, err, tailOrErr(n.logPath(), failureLogLines))
	}
	return nil
}

// startNode starts n's JVM.
func (c *Cluster) startNode(n *node) error {
	logf, err := openLog(n, "starting")
	if err != nil {
		return err
	}
	// The JVM's temporary files (snappy-java's native library) stay in
	// the node's dir, which Close removes, even when the node is killed.
	tmp := filepath.Join(n.Dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	args := append(kafkaconfig.JVMOptions(n.env), "-Djava.io.tmpdir="+tmp, "-cp", c.dist.Classpath(), kafkadist.ServerClass, n.propsPath())
	pidPath := n.pidPath()
	p, err := startProcess(c.cfg.java, args, n.Dir, logf, func() { _ = os.Remove(pidPath) })
	if err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	// The pid (also the process group ID) for whoever must clean up after
	// a Go process that could not: see Close.
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(p.pid())+"\n"), 0o644); err != nil {
		p.kill()
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		p.kill()
		return errors.New("localkafka: cluster closed while starting")
	}
	n.proc = p
	return nil
}

// openLog opens n's log for appending and writes a line that says what
// starts.
func openLog(n *node, what string) (*os.File, error) {
	f, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	fmt.Fprintf(f, "=== localkafka: node %d: %s at %s ===\n", n.ID, what, time.Now().Format(time.RFC3339Nano))
	return f, nil
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

// running returns n's process, nil if it is not running.
func (c *Cluster) running(n *node) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.proc
}

// forget clears n's process if it is still p.
func (c *Cluster) forget(n *node, p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.proc == p {
		n.proc = nil
	}
}

// withNode runs op on node id, alone among Stop, Kill and Restart of it.
func (c *Cluster) withNode(id int32, op func(*node) error) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	n.opMu.Lock()
	defer n.opMu.Unlock()
	return op(n)
}

// errEscalated is returned by stop when SIGTERM was not enough.
var errEscalated = errors.New("did not exit in time after SIGTERM, so it was killed")

// Stop stops node id gracefully: SIGTERM to its process group, which makes
// Kafka shut down in a controlled way, then SIGKILL if it has not exited
// after the stop timeout (WithStopTimeout; an error then says so) or when
// ctx ends. Stopping a node that is not running does nothing.
func (c *Cluster) Stop(ctx context.Context, id int32) error {
	return c.withNode(id, func(n *node) error { return c.stop(ctx, n) })
}

func (c *Cluster) stop(ctx context.Context, n *node) error {
	p := c.running(n)
	if p == nil {
		return nil
	}
	defer c.forget(n, p)
	p.signal(syscall.SIGTERM)
	timer := time.NewTimer(c.cfg.stopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
		if err := p.killAndWait(ctx); err != nil {
			return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
		}
		return fmt.Errorf("localkafka: node %d %w (stop timeout %v)", n.ID, errEscalated, c.cfg.stopTimeout)
	case <-ctx.Done():
		err := p.killAndWait(context.WithoutCancel(ctx))
		return fmt.Errorf("localkafka: node %d: stop cut short, node killed: %w", n.ID, errors.Join(ctx.Err(), err))
	}
}

// Kill sends SIGKILL to node id's process group, as a crash or a forced pod
// deletion would end it, and waits until the process is gone. Killing a node
// that is not running does nothing.
func (c *Cluster) Kill(ctx context.Context, id int32) error {
	return c.withNode(id, func(n *node) error {
		p := c.running(n)
		if p == nil {
			return nil
		}
		defer c.forget(n, p)
		if err := p.killAndWait(ctx); err != nil {
			return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
		}
		return nil
	})
}

// Restart stops node id as Stop does, if it is running, and starts it again
// with the same node ID, ports, config and data directory. A node that
// needed SIGKILL to stop is started all the same; its log says so.
func (c *Cluster) Restart(ctx context.Context, id int32) error {
	return c.withNode(id, func(n *node) error {
		err := c.stop(ctx, n)
		switch {
		case errors.Is(err, errEscalated):
			if f, lerr := openLog(n, err.Error()); lerr == nil {
				_ = f.Close()
			}
		case err != nil:
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("localkafka: node %d: restart: %w", n.ID, err)
		}
		return c.startNode(n)
	})
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

// Health checks the cluster once (see kafkaadmin.Client.CheckHealth), expecting every
// broker registered and answering, the controllers as the quorum's voters,
// and the cluster ID.
func (c *Cluster) Health(ctx context.Context) (kafkaadmin.Health, error) {
	cl, err := c.healthClient()
	if err != nil {
		return kafkaadmin.Health{}, err
	}
	var brokerIDs, voterIDs []int32
	for _, n := range c.Nodes() {
		if n.IsBroker() {
			brokerIDs = append(brokerIDs, n.ID)
		}
		if n.IsController() {
			voterIDs = append(voterIDs, n.ID)
		}
	}
	h, err := kafkaadmin.New(cl).CheckHealth(ctx, kafkaadmin.WithBrokers(brokerIDs...), kafkaadmin.WithVoters(voterIDs...), kafkaadmin.WithClusterID(c.cfg.clusterID))
	if err != nil {
		return h, fmt.Errorf("localkafka: %w", err)
	}
	return h, nil
}

func (c *Cluster) healthClient() (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("localkafka: cluster closed")
	}
	if c.client != nil {
		return c.client, nil
	}
	var seeds []string
	for _, n := range c.nodes {
		if n.BrokerAddr != "" {
			seeds = append(seeds, n.BrokerAddr)
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("localkafka: the cluster is not started")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("localkafka-health"),
		kgo.DialTimeout(2*time.Second),
		// Brokers that are starting refuse connections: retry soon, not
		// with kgo's backoff of up to 2.5s, so a check sees them up at once.
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	if err != nil {
		return nil, fmt.Errorf("localkafka: health client: %w", err)
	}
	c.client = cl
	return cl, nil
}

// WaitHealthy polls Health until the cluster is healthy: every broker
// registered and serving requests sent to it alone (so a broker killed and
// restarted just now does not pass on the strength of the metadata its
// previous incarnation left), every partition with a leader and a full ISR,
// and the KRaft quorum with a leader and every voter caught up. It fails at
// once if a node is not running (stopped, killed, or exited by itself, with
// the end of its log), and when ctx ends it says what it observed last.
//
// A controller-only node (WithSeparateControllers) is judged by the quorum
// alone: killed in the last 2 seconds, it can still count as caught up.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	if _, err := c.healthClient(); err != nil {
		return err
	}
	ticker := time.NewTicker(healthPollInterval)
	defer ticker.Stop()
	last := "no health check finished"
	for {
		if err := c.checkRunning(); err != nil {
			return err
		}
		checkCtx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
		c.cancelOnExit(checkCtx, cancel)
		h, err := c.Health(checkCtx)
		cancel()
		if err == nil && h.Healthy() {
			return nil
		}
		if ctx.Err() == nil {
			// Failed requests, a timed-out check's too, are in h.
			last = h.String()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localkafka: cluster not healthy (%w); last observed: %s", ctx.Err(), last)
		case <-ticker.C:
		}
	}
}

// cancelOnExit calls cancel when a running node exits before ctx ends, so
// that a health check in flight does not hide a crash.
func (c *Cluster) cancelOnExit(ctx context.Context, cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if p := n.proc; p != nil {
			go func() {
				select {
				case <-p.done:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
	}
}

// checkRunning fails if any node is not running.
func (c *Cluster) checkRunning() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.closed {
		return errors.New("localkafka: the cluster is not running (not started, or closed)")
	}
	for _, n := range c.nodes {
		switch {
		case n.proc == nil:
			return fmt.Errorf("localkafka: node %d is not running (stopped or killed); Restart it first", n.ID)
		case n.proc.exited():
			return fmt.Errorf("localkafka: node %d exited by itself: %v\n%s", n.ID, n.proc.exitErr(), tailOrErr(n.logPath(), failureLogLines))
		}
	}
	return nil
}

// Close kills every process the cluster started (SIGKILL to each process
// group), waits for them, and removes the cluster's directory if it made it
// (not one given by WithDir). It is safe to call more than once, and after a
// failed Start.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var procs []*process
	for _, n := range c.nodes {
		if n.proc != nil {
			procs = append(procs, n.proc)
			n.proc = nil
		}
	}
	client, dir, ownDir := c.client, c.dir, c.ownDir
	c.mu.Unlock()

	var errs []error
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), killWait)
	defer cancel()
	for _, p := range procs {
		if err := p.killAndWait(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if client != nil {
		client.Close()
	}
	if ownDir && dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("localkafka: close: %w", err)
	}
	return nil
}
