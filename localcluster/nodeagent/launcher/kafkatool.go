package launcher

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
)

// The distribution's client tools that an apache/kafka container may run
// (bin/NAME, as Kafka's system tests run them), and the heap their scripts
// give them unless KAFKA_HEAP_OPTS is set.
const (
	VerifiableProducerScript      = "kafka-verifiable-producer.sh"
	VerifiableConsumerScript      = "kafka-verifiable-consumer.sh"
	VerifiableShareConsumerScript = "kafka-verifiable-share-consumer.sh"
	toolHeap                      = "-Xmx512M"
)

// ToolClass is the main class the client tool script runs, and whether it
// is one this launcher runs.
func ToolClass(script string) (string, bool) {
	switch script {
	case VerifiableProducerScript:
		return kafkadist.VerifiableProducerClass, true
	case VerifiableConsumerScript:
		return kafkadist.VerifiableConsumerClass, true
	case VerifiableShareConsumerScript:
		return kafkadist.VerifiableShareConsumerClass, true
	}
	return "", false
}

// KafkaTool is one of the distribution's client tool scripts (ToolClass)
// in an apache/kafka container: as the script, then kafka-run-class.sh,
// run it, the tool's class with args on the jars' class path, its heap
// KAFKA_HEAP_OPTS or the script's 512 MiB, the other JVM options from the
// same KAFKA_* variables, and the tools' logging (WARN and above to
// stderr, so that the tool's events on stdout stay one per line).
func KafkaTool(libs, version, script string, args, environ []string) error {
	class, ok := ToolClass(script)
	if !ok {
		return fmt.Errorf("kafka-tool: %q is not a tool this launcher runs", script)
	}
	l, err := newBrokerLaunch(libs, version, environ)
	if err != nil {
		return fmt.Errorf("kafka-tool: %w", err)
	}
	logOpts, err := l.writeLoggingOf(l.line.ToolsLogging())
	if err != nil {
		return fmt.Errorf("kafka-tool: %w", err)
	}
	tmp, err := l.freshTmp()
	if err != nil {
		return fmt.Errorf("kafka-tool: %w", err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("kafka-tool: java not found: %w", err)
	}
	return syscall.Exec(java, toolArgv(java, l.libs, tmp, class, withToolHeap(l.env), logOpts, args), l.environ)
}

// withToolHeap is env with the scripts' heap when KAFKA_HEAP_OPTS is unset.
func withToolHeap(env map[string]string) map[string]string {
	if env["KAFKA_HEAP_OPTS"] != "" {
		return env
	}
	out := map[string]string{}
	maps.Copy(out, env)
	out["KAFKA_HEAP_OPTS"] = toolHeap
	return out
}

// toolArgv is the tool's java command line. The JVM caches no peer's
// address: brokers come back with new IPs.
func toolArgv(java, libs, tmp, class string, env map[string]string, logOpts, args []string) []string {
	argv := append([]string{java}, kafkaconfig.JVMOptionsWithLogging(env, logOpts)...)
	argv = append(argv, "-Djava.io.tmpdir="+tmp, "-Dsun.net.inetaddr.ttl=0", "-Dsun.net.inetaddr.negative.ttl=0",
		"-cp", filepath.Join(libs, "*"), class)
	return append(argv, args...)
}
