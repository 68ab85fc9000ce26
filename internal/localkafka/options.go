package localkafka

import (
	"fmt"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
)

// Defaults of the options.
const (
	DefaultNodes       = 3
	DefaultHeapOpts    = "-Xmx512m -Xms128m"
	DefaultStopTimeout = 30 * time.Second
	// ControllerIDBase is the node ID of the first separate controller
	// (WithSeparateControllers); brokers are numbered from 0.
	ControllerIDBase = 100
)

// Option configures a Cluster.
type Option func(*config)

type config struct {
	nodes       int
	controllers int // separate controllers; 0: combined mode
	dir         string
	version     string
	libsDir     string
	java        string
	clusterID   string
	env         map[string]string // extra env for every node, over the defaults
	log4jConfig string
	stopTimeout time.Duration
	errs        []error // from options, reported by New
}

// WithNodes sets how many brokers the cluster has, overriding the default of
// 3. In combined mode (the default) each is also a controller.
func WithNodes(n int) Option {
	return func(c *config) { c.nodes = n }
}

// WithSeparateControllers runs n controller-only nodes (IDs 100, 101, ...)
// beside broker-only nodes, instead of the default combined mode, where
// every node is both broker and controller.
func WithSeparateControllers(n int) Option {
	return func(c *config) { c.controllers = n }
}

// WithDir puts every node's config, data and log under dir/node-<id>,
// overriding the default of a new temporary directory that Close removes.
// A dir is kept by Close, and a cluster started again on it finds its nodes'
// storage already formatted.
func WithDir(dir string) Option {
	return func(c *config) { c.dir = dir }
}

// WithVersion sets the Kafka version whose fetched jars run the nodes,
// overriding the default kafkadist.DefaultVersion (4.4.0).
func WithVersion(v string) Option {
	return func(c *config) { c.version = v }
}

// WithLibsDir runs the nodes from the jars in dir, overriding the default of
// .cache/kafka/<version>/libs in the current directory or its nearest parent
// that has it (see kafkadist.Find).
func WithLibsDir(dir string) Option {
	return func(c *config) { c.libsDir = dir }
}

// WithJava sets the java command, overriding the default of $JAVA_HOME/bin/java
// when JAVA_HOME is set, else java from PATH.
func WithJava(path string) Option {
	return func(c *config) { c.java = path }
}

// WithClusterID sets the cluster ID that storage is formatted with,
// overriding the default kafkaconfig.DefaultClusterID (the apache/kafka
// image's default).
func WithClusterID(id string) Option {
	return func(c *config) { c.clusterID = id }
}

// WithEnv sets an environment variable of every node's container-style
// environment, which is rendered to server.properties and JVM options as the
// apache/kafka image does (see kafkaconfig). It overrides localkafka's
// defaults, such as KAFKA_HEAP_OPTS (default "-Xmx512m -Xms128m").
func WithEnv(name, value string) Option {
	return func(c *config) { c.env[name] = value }
}

// WithBrokerConfig sets a server.properties property on every node,
// overriding localkafka's default for it, if any. It is WithEnv with the
// property's KAFKA_* variable name.
func WithBrokerConfig(property, value string) Option {
	return func(c *config) {
		name, err := kafkaconfig.EnvName(property)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithBrokerConfig: %w", err))
			return
		}
		c.env[name] = value
	}
}

// WithLog4jConfig sets the log4j2 config file of the nodes, overriding the
// default of kafkadist.BrokerLog4j2 written into the cluster's directory.
func WithLog4jConfig(path string) Option {
	return func(c *config) { c.log4jConfig = path }
}

// WithStopTimeout sets how long Stop waits after SIGTERM before it sends
// SIGKILL, overriding the default of 30s.
func WithStopTimeout(d time.Duration) Option {
	return func(c *config) { c.stopTimeout = d }
}
