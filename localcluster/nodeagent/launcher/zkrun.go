package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/zkconfig"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/sandbox"
)

// zkServerHeapMB is the server heap (ZK_SERVER_HEAP) when the env gives
// none: smaller than zkEnv.sh's 1000 MiB, since the local cluster runs
// every pod's JVM on one host. JVMFLAGS=-Xmx... still sets it, as in the
// image.
const zkServerHeapMB = "256"

// ZooKeeperRun is the official zookeeper image's launcher, run inside the
// pod: it renders the ZOO_* env into zoo.cfg with the image's own rules
// (zkconfig), binds this server's ports to the pod's IP (pods share the
// host's network, each on its own loopback IP), writes myid if the data dir
// has none, and execs QuorumPeerMain from libs, the jars of a fetched
// Kafka 3.9.x, which ships ZooKeeper's, with log4j 1 logging to stdout.
//
// mounts are the mountPaths of the container's volumes (one --mount each),
// which pod-exec has bound in the container's own filesystem, which this
// process runs in. ZOO_DATA_DIR and ZOO_DATA_LOG_DIR (/data and /datalog
// when unset, the Dockerfile's defaults) are used as given only when at or
// under one of mounts, compared as cleaned paths component by component
// (/var/lib/zookeeper/data is under a mount at /var/lib/zookeeper, while
// /data2 is not under one at /data); any other path is the image's
// filesystem and becomes <podDir>/zookeeper/image/<the path without its
// leading slash>, created if missing. That is in the container's writable
// layer, lost when the container is replaced, as a runtime's is. (The
// mapping predates the container filesystem, when the host's own /data
// was visible here; it is kept, and harmless.) A path that is not absolute
// is refused.
func ZooKeeperRun(libs string, mounts []string, environ []string) error {
	if libs == "" {
		return errors.New("zookeeper-run: --libs is required")
	}
	env, err := podEnv(environ)
	if err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	podIP, podDir := env[nodeagent.PodIPEnv], env[nodeagent.PodDirEnv]
	dir := filepath.Join(podDir, "zookeeper")
	if err := containerDirs(env, mounts, filepath.Join(dir, "image")); err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	cfg, err := zkconfig.Render(env)
	if err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	myID, err := ensureMyID(zkconfig.DataDir(env), env)
	if err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	cfg, found, err := bindToPod(cfg, myID, podIP)
	if err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	if !found {
		fmt.Fprintf(os.Stderr, "zookeeper-run: warning: zoo.cfg has no server.%d entry for this server's myid; its quorum ports are not bound to the pod IP %s\n", myID, podIP)
	}

	// The image writes zoo.cfg into ZOO_CONF_DIR only when none is there;
	// here it is rendered afresh into the pod's dir on every start, from
	// the env alone: a zoo.cfg mounted at ZOO_CONF_DIR is not read.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	// The 3.9.x jars log through reload4j (log4j 1); the brokers' config
	// holds org.apache.zookeeper at WARN, which a server wants at INFO.
	logging := kafkadist.Line{Name: "3.9.x"}.BrokerLogging()
	log4j := filepath.Join(dir, logging.File)
	content := logging.Content + "\n# A ZooKeeper server: its own loggers at INFO.\nlog4j.logger.org.apache.zookeeper=INFO\n"
	if err := os.WriteFile(log4j, []byte(content), 0o644); err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	// The JVM's temporary files go to a directory of the launcher's,
	// cleared on each start (with the container filesystem, each start
	// has a fresh one anyway).
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("zookeeper-run: %w", err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("zookeeper-run: java not found: %w", err)
	}
	if env["ZK_SERVER_HEAP"] == "" {
		env["ZK_SERVER_HEAP"] = zkServerHeapMB
	}
	// The JVM must not cache a peer's address: pods come back with new IPs.
	args := append([]string{java}, zkconfig.JVMOptions(env)...)
	args = append(args, logging.JVMOption(log4j), "-Djava.io.tmpdir="+tmp,
		"-Dsun.net.inetaddr.ttl=0", "-Dsun.net.inetaddr.negative.ttl=0",
		"-cp", classpath(libs), kafkadist.ZooKeeperServerClass, cfgPath)
	return syscall.Exec(java, args, environ)
}

// classpath returns the -cp of libs: every jar, with the slf4j binding to
// reload4j first. The fetched 3.9.x jars also hold logback-classic, which
// ZooKeeper's pom brings, and slf4j 1.7 takes the first binding on the
// classpath, while a wildcard's order is the directory's.
func classpath(libs string) string {
	first, _ := filepath.Glob(filepath.Join(libs, "slf4j-reload4j-*.jar"))
	return strings.Join(append(first, filepath.Join(libs, "*")), string(os.PathListSeparator))
}

// containerDirs sets ZOO_DATA_DIR and ZOO_DATA_LOG_DIR in env (when
// unset, zkconfig.DefaultDataDir and DefaultDataLogDir) to the directories
// that hold them: a path at or under one of mounts, the mountPaths of the
// container's volumes, compared as cleaned paths component by component, is
// used as given (cleaned); any other path is the image's filesystem and
// becomes layer/<the path without its leading slash>, created if missing,
// in the container's own writable layer (see ZooKeeperRun). A path that is
// not absolute is an error: it would be relative to the image's working
// directory.
func containerDirs(env map[string]string, mounts []string, layer string) error {
	cleaned := make([]string, len(mounts))
	for i, m := range mounts {
		cleaned[i] = filepath.Clean(m)
	}
	for _, d := range [][2]string{{"ZOO_DATA_DIR", zkconfig.DefaultDataDir}, {"ZOO_DATA_LOG_DIR", zkconfig.DefaultDataLogDir}} {
		p, ok := env[d[0]]
		if !ok {
			p = d[1]
		}
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q is not an absolute path", d[0], p)
		}
		p = filepath.Clean(p)
		if !sandbox.Under(p, cleaned...) {
			p = filepath.Join(layer, strings.TrimPrefix(p, "/"))
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		}
		env[d[0]] = p
	}
	return nil
}

// ensureMyID writes ZOO_MY_ID into dataDir/myid unless the file exists, as
// the image does, and returns the ID that ZooKeeper will read from it.
// dataDir is containerDirs' ZOO_DATA_DIR: a volume's mountPath or a path
// under one, or a directory of the pod's image layer, which containerDirs
// has created. The data dir must exist, as in the image, whose entrypoint
// fails writing myid otherwise: a path under a volume's mountPath that the
// volume does not hold is an error.
func ensureMyID(dataDir string, env map[string]string) (int64, error) {
	path := filepath.Join(dataDir, "myid")
	raw, err := os.ReadFile(path)
	if err == nil {
		first, _, _ := strings.Cut(string(raw), "\n")
		id, err := zkconfig.ParseID(strings.TrimSpace(first))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return id, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	id, err := zkconfig.MyID(env)
	if err != nil {
		return 0, err
	}
	if st, err := os.Stat(dataDir); err != nil || !st.IsDir() {
		return 0, fmt.Errorf("data dir %s (ZOO_DATA_DIR) does not exist in its volume: create it there, or mount the volume at it, as the image's entrypoint would fail writing myid too", dataDir)
	}
	if err := os.WriteFile(path, []byte(strconv.FormatInt(id, 10)+"\n"), 0o644); err != nil {
		return 0, err
	}
	return id, nil
}

// bindToPod adapts cfg to the pod's share of the host network: this
// server's own server.<myID> entry gets the pod's IP for its quorum
// addresses (so its peer and election ports bind there; the other entries
// keep their names) and for a client part with no host or a wildcard one;
// clientPortAddress, secureClientPortAddress (when their port is set) and
// admin.serverAddress given no host or a wildcard get the pod's IP too; and
// quorumListenOnAllIPs is forced to false, which would bind the quorum
// ports to every address. found is false when cfg has no entry for myID.
func bindToPod(cfg zkconfig.Config, myID int64, ip string) (out zkconfig.Config, found bool, err error) {
	servers, err := cfg.Servers()
	if err != nil {
		return zkconfig.Config{}, false, err
	}
	for _, s := range servers {
		if s.ID != myID {
			continue
		}
		found = true
		for i := range s.Addrs {
			s.Addrs[i].Host = ip
		}
		if s.ClientPort != 0 && isWildcard(s.ClientHost) {
			s.ClientHost = ip
		}
		cfg = cfg.WithServer(s)
	}
	for port, addr := range map[string]string{"clientPort": "clientPortAddress", "secureClientPort": "secureClientPortAddress"} {
		if _, ok := cfg.Get(port); !ok {
			continue
		}
		if a, _ := cfg.Get(addr); isWildcard(a) {
			cfg = cfg.With(addr, ip)
		}
	}
	if a, _ := cfg.Get("admin.serverAddress"); isWildcard(a) {
		cfg = cfg.With("admin.serverAddress", ip)
	}
	if _, ok := cfg.Get("quorumListenOnAllIPs"); ok {
		cfg = cfg.With("quorumListenOnAllIPs", "false")
	}
	return cfg, found, nil
}

// isWildcard reports whether host is empty or an any-address.
func isWildcard(host string) bool {
	switch strings.Trim(strings.TrimSpace(host), "[]") {
	case "", "0.0.0.0", "::", "0:0:0:0:0:0:0:0":
		return true
	}
	return false
}
