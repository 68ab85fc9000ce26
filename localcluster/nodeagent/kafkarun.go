package nodeagent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
)

// KafkaRun is the apache/kafka image's launcher, run inside the pod: it
// renders the KAFKA_* env into server.properties with the image's own rules
// (kafkaconfig), binds listeners given without a host to the pod's IP (pods
// share the host's network, each on its own loopback IP), formats storage
// on first start only (in KRaft mode only), and execs the JVM from the fetched jars of version
// (read from the jars' fetch mark when ""), with its line's logging config.
func KafkaRun(libs, version string, environ []string) error {
	if version == "" {
		d, err := kafkadist.OpenLibs(libs)
		if err != nil {
			return fmt.Errorf("kafka-run: %w", err)
		}
		version = d.Version
	}
	line, err := kafkadist.LineOf(version)
	if err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	podIP, podDir := env[PodIPEnv], env[PodDirEnv]
	if podIP == "" || podDir == "" {
		return fmt.Errorf("kafka-run: %s and %s must be set (the node agent sets them)", PodIPEnv, PodDirEnv)
	}
	props, err := kafkaconfig.Render(env)
	if err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	if l, ok := props.Get("listeners"); ok {
		props = props.With("listeners", bindTo(l, podIP))
	}
	dir := filepath.Join(podDir, "kafka")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	propsPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(props.String()), 0o644); err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	logging := line.BrokerLogging()
	log4j := filepath.Join(dir, logging.File)
	if err := os.WriteFile(log4j, []byte(logging.Content), 0o644); err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("kafka-run: java not found: %w", err)
	}
	cp := filepath.Join(libs, "*")
	logOpt := logging.JVMOption(log4j)

	// Format on first start only, as the image does: a log dir that holds
	// meta.properties keeps its identity. In ZooKeeper mode (no
	// process.roles) the image formats nothing: the broker writes its
	// meta.properties itself, with the cluster ID it finds in ZooKeeper.
	logDirs, _ := props.Get("log.dirs")
	if logDirs == "" {
		logDirs, _ = props.Get("log.dir")
	}
	first := strings.Split(logDirs, ",")[0]
	_, kraft := props.Get("process.roles")
	if _, err := os.Stat(filepath.Join(first, "meta.properties")); kraft && err != nil {
		id, err := kafkaconfig.ClusterID(env)
		if err != nil {
			return fmt.Errorf("kafka-run: %w", err)
		}
		format := exec.Command(java, "-Xmx256m", logOpt, "-cp", cp, kafkadist.StorageToolClass,
			"format", "--cluster-id="+id, "-c", propsPath, "--ignore-formatted")
		format.Stdout, format.Stderr = os.Stdout, os.Stderr
		if err := format.Run(); err != nil {
			return fmt.Errorf("kafka-run: format storage: %w", err)
		}
	}
	// The JVM's temporary files (snappy-java unpacks its native library
	// there) stay in the pod's dir, not in the host's /tmp, where a killed
	// broker would leave them; each start clears the last one's.
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	// The JVM must not cache a peer's address: pods come back with new IPs.
	args := append([]string{java}, kafkaconfig.JVMOptions(env)...)
	args = append(args, logOpt, "-Djava.io.tmpdir="+tmp, "-Dsun.net.inetaddr.ttl=0", "-Dsun.net.inetaddr.negative.ttl=0",
		"-cp", cp, kafkadist.ServerClass, propsPath)
	return syscall.Exec(java, args, environ)
}

// bindTo rewrites listeners with no host or a wildcard host to ip.
func bindTo(listeners, ip string) string {
	parts := strings.Split(listeners, ",")
	for i, l := range parts {
		name, addr, ok := strings.Cut(strings.TrimSpace(l), "://")
		if !ok {
			continue
		}
		host, port, ok := strings.Cut(addr, ":")
		if !ok {
			continue
		}
		if host == "" || host == "0.0.0.0" || host == "[::]" {
			parts[i] = name + "://" + ip + ":" + port
		}
	}
	return strings.Join(parts, ",")
}
