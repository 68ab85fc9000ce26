package kubelet

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/launcher"
)

// kafkaLookup returns the runtime of an apache/kafka image with tag: the
// pinned jars if the agent was given some (--kafka-libs), otherwise the
// fetched jars of the version the tag names, from the cache. A version
// that is not fetched, or of no known line, gets a message naming the
// command that fetches it, as a waiting reason.
func (r runtimes) kafkaLookup(image, tag string) (runtime, string) {
	if r.kafkaLibs != "" {
		return kafkaRuntime{node: r.node, libs: r.kafkaLibs}, ""
	}
	version := kafkadist.VersionOfTag(tag)
	if r.kafkaCache == "" {
		return nil, fmt.Sprintf("image %q needs the Kafka %s jars: run `%s`, then `kafkachaos cluster up` from the repository", image, version, kafkadist.FetchCommand(version))
	}
	d, err := kafkadist.InCache(r.kafkaCache, version)
	if err != nil {
		return nil, fmt.Sprintf("image %q: %v", image, err)
	}
	return kafkaRuntime{node: r.node, libs: d.LibsDir, version: d.Version}, ""
}

// kafkaRuntime runs Apache Kafka as the official apache/kafka image does:
// `kafkachaos-node kafka-run` renders KAFKA_* env into server.properties,
// formats storage on first start, and execs the JVM. A container whose
// command is one of the distribution's scripts runs that instead
// (`kafka-run --script NAME -- ARGS`): bin/kafka-server-start.sh (its
// config file and overrides, no env rendering, no format) or
// bin/kafka-storage.sh (Kafka's StorageTool, as an init container that
// formats runs it), or one of the verifiable clients of Kafka's system
// tests (bin/kafka-verifiable-producer.sh, -consumer.sh). Any other
// command is refused, as this runtime has no shell to run it with.
type kafkaRuntime struct{ node, libs, version string }

func (k kafkaRuntime) command(c corev1.Container) (string, []string, error) {
	args := []string{"kafka-run", "--libs", k.libs}
	if k.version != "" {
		args = append(args, "--version", k.version)
	}
	if len(c.Command) == 0 {
		return k.node, args, nil
	}
	script := path.Base(c.Command[0])
	if _, tool := launcher.ToolClass(script); !tool && script != launcher.KafkaStartScript && script != launcher.KafkaStorageScript {
		return "", nil, fmt.Errorf("the apache/kafka image runs its own launcher, %s, %s, %s, %s or %s here, not %q",
			launcher.KafkaStartScript, launcher.KafkaStorageScript, launcher.VerifiableProducerScript, launcher.VerifiableConsumerScript, launcher.VerifiableShareConsumerScript, c.Command[0])
	}
	args = append(append(args, "--script", script, "--"), c.Command[1:]...)
	return k.node, append(args, c.Args...), nil
}
