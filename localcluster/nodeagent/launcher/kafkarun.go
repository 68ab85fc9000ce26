package launcher

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/properties"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

// The Kafka distribution's scripts that a container of the apache/kafka
// image may run instead of the image's launcher.
const (
	KafkaStartScript   = "kafka-server-start.sh"
	KafkaStorageScript = "kafka-storage.sh"
)

// KafkaRun is the apache/kafka image's launcher, run inside the pod: it
// renders the KAFKA_* env into server.properties with the image's own rules
// (kafkaconfig), binds listeners given without a host to the pod's IP (pods
// share the host's network, each on its own loopback IP), formats storage
// on first start only, and execs the JVM from the fetched jars of version
// (read from the jars' fetch mark when ""), with its line's logging config.
// Like the image (its KafkaDockerWrapper always formats), it cannot start
// a broker in ZooKeeper mode: Kafka's StorageTool refuses to format one.
func KafkaRun(libs, version string, environ []string) error {
	l, err := newBrokerLaunch(libs, version, environ)
	if err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	props, err := kafkaconfig.Render(l.env)
	if err != nil {
		return fmt.Errorf("kafka-run: %w", err)
	}
	return l.exec(props, true)
}

// KafkaServerStart is the Kafka distribution's bin/kafka-server-start.sh
// in an apache/kafka container that runs it instead of the image's
// launcher (args: CONFIG [--override KEY=VALUE]..., as the script takes
// them): it reads CONFIG (a container path, such as a configMap volume's
// file), applies the overrides, binds listeners without a host to the
// pod's IP, formats nothing (as the script does not), and execs the JVM as
// KafkaRun does. The JVM options come from the same KAFKA_* variables the
// script reads (KAFKA_HEAP_OPTS, KAFKA_OPTS, ...).
func KafkaServerStart(libs, version string, args, environ []string) error {
	l, err := newBrokerLaunch(libs, version, environ)
	if err != nil {
		return fmt.Errorf("kafka-server-start: %w", err)
	}
	props, err := startScriptProps(args)
	if err != nil {
		return fmt.Errorf("kafka-server-start: %w", err)
	}
	return l.exec(props, false)
}

// KafkaStorage is the Kafka distribution's bin/kafka-storage.sh in an
// apache/kafka container (an init container that formats the log dirs
// before kafka-server-start.sh runs, as deployments of a dynamic KRaft
// quorum do): Kafka's StorageTool with args as given, its config file a
// container path. Its exit code is the tool's.
func KafkaStorage(libs, version string, args, environ []string) error {
	l, err := newBrokerLaunch(libs, version, environ)
	if err != nil {
		return fmt.Errorf("kafka-storage: %w", err)
	}
	logOpts, err := l.writeLogging(false)
	if err != nil {
		return fmt.Errorf("kafka-storage: %w", err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("kafka-storage: java not found: %w", err)
	}
	return syscall.Exec(java, l.storageTool(java, logOpts, args...), l.environ)
}

// startScriptProps reads kafka-server-start.sh's arguments: the config
// file, then --override KEY=VALUE pairs, which win.
func startScriptProps(args []string) (properties.Properties, error) {
	if len(args) > 0 && args[0] == "-daemon" {
		return properties.Properties{}, errors.New("-daemon would leave the container with no process: run in the foreground")
	}
	if len(args) == 0 {
		return properties.Properties{}, errors.New("usage: kafka-server-start.sh CONFIG [--override KEY=VALUE]...")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return properties.Properties{}, err
	}
	defer f.Close()
	props, err := properties.Read(f)
	if err != nil {
		return properties.Properties{}, fmt.Errorf("%s: %w", args[0], err)
	}
	for rest := args[1:]; len(rest) > 0; rest = rest[2:] {
		if rest[0] != "--override" || len(rest) < 2 {
			return properties.Properties{}, fmt.Errorf("after the config file only --override KEY=VALUE pairs are taken, got %q", rest)
		}
		k, v, ok := strings.Cut(rest[1], "=")
		if !ok || k == "" {
			return properties.Properties{}, fmt.Errorf("--override %q: want KEY=VALUE", rest[1])
		}
		props = props.With(k, v)
	}
	return props, nil
}

// brokerLaunch is what both launchers share: the jars and their line, the
// container's env, and the pod's IP and directory.
type brokerLaunch struct {
	libs, podIP, podDir string
	line                kafkadist.Line
	env                 map[string]string
	environ             []string
}

func newBrokerLaunch(libs, version string, environ []string) (brokerLaunch, error) {
	if version == "" {
		d, err := kafkadist.OpenLibs(libs)
		if err != nil {
			return brokerLaunch{}, err
		}
		version = d.Version
	}
	line, err := kafkadist.LineOf(version)
	if err != nil {
		return brokerLaunch{}, err
	}
	env, err := podEnv(environ)
	if err != nil {
		return brokerLaunch{}, err
	}
	return brokerLaunch{libs: libs, podIP: env[nodeagent.PodIPEnv], podDir: env[nodeagent.PodDirEnv], line: line, env: env, environ: environ}, nil
}

// podEnv is a launcher's environ as a map, which must hold the pod's IP
// and directory (nodeagent.PodIPEnv, nodeagent.PodDirEnv) that the node agent sets.
func podEnv(environ []string) (map[string]string, error) {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	if env[nodeagent.PodIPEnv] == "" || env[nodeagent.PodDirEnv] == "" {
		return nil, fmt.Errorf("%s and %s must be set (the node agent sets them)", nodeagent.PodIPEnv, nodeagent.PodDirEnv)
	}
	return env, nil
}

// exec binds props' listeners to the pod's IP, writes them and the
// logging config into the pod's dir, formats storage on first start when
// format is set, and execs the broker's JVM.
func (l brokerLaunch) exec(props properties.Properties, format bool) error {
	if v, ok := props.Get("listeners"); ok {
		props = props.With("listeners", bindTo(v, l.podIP))
	}
	dir := l.dir()
	logOpts, err := l.writeLogging(format)
	if err != nil {
		return err
	}
	propsPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(props.String()), 0o644); err != nil {
		return err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("java not found: %w", err)
	}
	cp := filepath.Join(l.libs, "*")

	// Format as the image does: its launcher formats on every start
	// without --ignore-formatted, and goes on when the tool says a dir is
	// already formatted. So it formats only when no log dir (nor the
	// metadata log dir) holds meta.properties, and then formats them all;
	// skipping the tool in the other case saves a JVM start.
	if format && !anyFormatted(props) {
		id, err := kafkaconfig.ClusterID(l.env)
		if err != nil {
			return err
		}
		tool := l.storageTool(java, logOpts, "format", "--cluster-id="+id, "-c", propsPath)
		// The image's launcher formats with its storage.jsa.
		argv := append([]string{java}, withArchive(tool[1:], kafkadist.Dist{LibsDir: l.libs}.StorageArchive())...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("format storage: %w", err)
		}
	}
	// The JVM's temporary files (snappy-java unpacks its native library
	// there) go to a directory of the launcher's, cleared on each start
	// (with the container filesystem, each start has a fresh one anyway).
	tmp, err := l.freshTmp()
	if err != nil {
		return err
	}
	// The image's launcher starts the broker with its kafka.jsa, by
	// appending the archive to KAFKA_JVM_PERFORMANCE_OPTS: the variable is
	// then never empty, so kafka-run-class.sh's G1 defaults do not apply
	// unless the user set them. kafka-server-start.sh run by itself (format
	// false) uses no archive and gets the defaults.
	env := l.env
	if format {
		env = launcherEnv(env, kafkadist.Dist{LibsDir: l.libs}.SharedArchive())
	}
	// As in kafka-run-class.sh, the logging options go where
	// KAFKA_LOG4J_OPTS goes, whole (a path may hold spaces).
	// The JVM must not cache a peer's address: pods come back with new IPs.
	args := append([]string{java}, kafkaconfig.JVMOptionsWithLogging(env, logOpts)...)
	args = append(args, "-Djava.io.tmpdir="+tmp, "-Dsun.net.inetaddr.ttl=0", "-Dsun.net.inetaddr.negative.ttl=0",
		"-cp", cp, kafkadist.ServerClass, propsPath)
	return syscall.Exec(java, args, l.environ)
}

// freshTmp empties and returns the launcher's directory for the JVM's
// temporary files.
func (l brokerLaunch) freshTmp() (string, error) {
	tmp := filepath.Join(l.dir(), "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	return tmp, os.MkdirAll(tmp, 0o755)
}

// defaultLogDir is Kafka's log.dir when neither log.dirs nor log.dir is
// set.
const defaultLogDir = "/tmp/kafka-logs"

// anyFormatted reports whether one of props' log dirs (log.dirs, else
// log.dir, else Kafka's default of log.dir; and metadata.log.dir) holds a
// meta.properties.
func anyFormatted(props properties.Properties) bool {
	dirs, _ := props.Get("log.dirs")
	if dirs == "" {
		dirs, _ = props.Get("log.dir")
	}
	if dirs == "" {
		dirs = defaultLogDir
	}
	all := strings.Split(dirs, ",")
	if meta, ok := props.Get("metadata.log.dir"); ok {
		all = append(all, meta)
	}
	for _, d := range all {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "meta.properties")); err == nil {
			return true
		}
	}
	return false
}

// storageTool is the command line of Kafka's StorageTool with args: what
// kafka-storage.sh runs, and the image's format on first start.
func (l brokerLaunch) storageTool(java string, logOpts []string, args ...string) []string {
	argv := append(append([]string{java, "-Xmx256m"}, logOpts...), "-cp", filepath.Join(l.libs, "*"), kafkadist.StorageToolClass)
	return append(argv, args...)
}

// launcherEnv is env as the image's launcher passes it to
// kafka-server-start.sh: with jsa (when there is one) appended to
// KAFKA_JVM_PERFORMANCE_OPTS, which is then never empty.
func launcherEnv(env map[string]string, jsa string) map[string]string {
	if jsa == "" {
		return env
	}
	out := maps.Clone(env)
	out["KAFKA_JVM_PERFORMANCE_OPTS"] = strings.TrimSpace(env["KAFKA_JVM_PERFORMANCE_OPTS"] + " -XX:SharedArchiveFile=" + jsa)
	return out
}

// withArchive puts -XX:SharedArchiveFile=jsa first in the JVM arguments
// args, when there is an archive.
func withArchive(args []string, jsa string) []string {
	if jsa == "" {
		return args
	}
	return append([]string{"-XX:SharedArchiveFile=" + jsa}, args...)
}

// dir is the launcher's directory in the pod's.
func (l brokerLaunch) dir() string { return filepath.Join(l.podDir, "kafka") }

// writeLogging writes the line's logging config into the launcher's
// directory and returns the JVM options that use it, as kafka-run-class.sh
// builds them: -Dkafka.logs.dir (a user's config may log to files there),
// then the user's KAFKA_LOG4J_OPTS when set (split on white space, as the
// script leaves it unquoted), else the written config. launcher (the
// image's own launcher, not a distribution script run in its place) also
// applies KAFKA_LOG4J_ROOT_LOGLEVEL and KAFKA_LOG4J_LOGGERS, as the image's
// KafkaDockerWrapper does.
func (l brokerLaunch) writeLogging(launcher bool) ([]string, error) {
	logging := l.line.BrokerLogging()
	if launcher {
		logging = logging.WithLevels(l.env["KAFKA_LOG4J_ROOT_LOGLEVEL"], l.env["KAFKA_LOG4J_LOGGERS"])
	}
	return l.writeLoggingOf(logging)
}

// writeLoggingOf writes logging into the launcher's directory unless the
// user's KAFKA_LOG4J_OPTS is set, and returns the JVM options, as
// writeLogging says.
func (l brokerLaunch) writeLoggingOf(logging kafkadist.Logging) ([]string, error) {
	logs := cmp.Or(l.env["LOG_DIR"], filepath.Join(l.dir(), "logs")) // as kafka-run-class.sh
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	opts := []string{"-Dkafka.logs.dir=" + logs}
	if user := strings.Fields(l.env["KAFKA_LOG4J_OPTS"]); len(user) > 0 {
		return append(opts, user...), nil
	}
	path := filepath.Join(l.dir(), logging.File)
	if err := os.WriteFile(path, []byte(logging.Content), 0o644); err != nil {
		return nil, err
	}
	return append(opts, logging.JVMOption(path)), nil
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
