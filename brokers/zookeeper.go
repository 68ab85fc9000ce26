package brokers

import (
	"net"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

// startScript is the Kafka distribution's start script, which a container
// runs instead of an image's launcher (as the zookeeper layout does).
const startScript = "kafka-server-start.sh"

// startsKafka says whether container c runs Kafka's start script as its
// command or first argument.
func startsKafka(c *corev1.Container) bool {
	for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
		if path.Base(a) == startScript {
			return true
		}
	}
	return false
}

// zooKeeperConnect returns the zookeeper.connect that pod p's Kafka
// container is given: from its env (the apache/kafka and confluentinc
// images' KAFKA_ZOOKEEPER_CONNECT, bitnami's KAFKA_CFG_ZOOKEEPER_CONNECT),
// or from an `--override zookeeper.connect=...` argument of the start
// script, with $(VAR) references to its env expanded; "" if neither.
func zooKeeperConnect(p *corev1.Pod) string {
	c := kafkaContainer(p)
	if c == nil {
		return ""
	}
	for _, name := range []string{"KAFKA_ZOOKEEPER_CONNECT", "KAFKA_CFG_ZOOKEEPER_CONNECT"} {
		if v, ok := envValue(p, c, name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	v, _ := startScriptOverride(p, c, "zookeeper.connect")
	return v
}

// startScriptOverride returns the value that an `--override KEY=VALUE`
// argument of container c (of pod p) gives key, with $(VAR) references to
// its env expanded, and whether there is one.
func startScriptOverride(p *corev1.Pod, c *corev1.Container, key string) (string, bool) {
	args := append(append([]string(nil), c.Command...), c.Args...)
	for i, a := range args {
		if a == "--override" && i+1 < len(args) {
			if v, ok := strings.CutPrefix(args[i+1], key+"="); ok {
				return strings.TrimSpace(kube.Expand(v, envValues(p, c))), true
			}
		}
	}
	return "", false
}

// ZooKeeperServers splits a zookeeper.connect string ("h1:2181,h2:2181/chroot")
// into its host:port addresses, without the chroot; a host without a port
// gets ZooKeeper's client port 2181.
func ZooKeeperServers(connect string) []string {
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		connect = connect[:i]
	}
	var out []string
	for a := range strings.SplitSeq(connect, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			a = net.JoinHostPort(a, "2181")
		}
		out = append(out, a)
	}
	return out
}
