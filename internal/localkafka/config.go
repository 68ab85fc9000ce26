package localkafka

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/loopback"
)

// Listener names in every node's config.
const (
	brokerListener     = "PLAINTEXT"
	controllerListener = "CONTROLLER"
	host               = "127.0.0.1"
)

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
