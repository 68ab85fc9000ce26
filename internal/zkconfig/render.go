package zkconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The image's environment variables, with their Dockerfile ENV defaults.
// The entrypoint expands them unquoted with no fallback of its own, so a
// variable set to "" (as a Kubernetes env entry can) renders an empty value,
// as in the image; only ZOO_SERVERS and ZOO_MY_ID fall back when empty.
const (
	DefaultConfDir         = "/conf"                             // ZOO_CONF_DIR
	DefaultDataDir         = "/data"                             // ZOO_DATA_DIR
	DefaultDataLogDir      = "/datalog"                          // ZOO_DATA_LOG_DIR
	DefaultLogDir          = "/logs"                             // ZOO_LOG_DIR
	DefaultTickTime        = "2000"                              // ZOO_TICK_TIME
	DefaultInitLimit       = "5"                                 // ZOO_INIT_LIMIT
	DefaultSyncLimit       = "2"                                 // ZOO_SYNC_LIMIT
	DefaultPurgeInterval   = "0"                                 // ZOO_AUTOPURGE_PURGEINTERVAL
	DefaultSnapRetainCount = "3"                                 // ZOO_AUTOPURGE_SNAPRETAINCOUNT
	DefaultMaxClientCnxns  = "60"                                // ZOO_MAX_CLIENT_CNXNS
	DefaultStandalone      = "true"                              // ZOO_STANDALONE_ENABLED
	DefaultAdminServer     = "true"                              // ZOO_ADMINSERVER_ENABLED
	DefaultMyID            = "1"                                 // ZOO_MY_ID, when unset or empty
	DefaultServers         = "server.1=localhost:2888:3888;2181" // ZOO_SERVERS, when unset or empty
)

// DataDir returns the data dir (ZOO_DATA_DIR) that env gives, as the
// container sees it.
func DataDir(env map[string]string) string { return or(env, "ZOO_DATA_DIR", DefaultDataDir) }

// DataLogDir returns the transaction log dir (ZOO_DATA_LOG_DIR) that env
// gives, as the container sees it.
func DataLogDir(env map[string]string) string {
	return or(env, "ZOO_DATA_LOG_DIR", DefaultDataLogDir)
}

// or returns env[name] if it is set, even to "", and def otherwise: a
// Dockerfile ENV default.
func or(env map[string]string, name, def string) string {
	if v, ok := env[name]; ok {
		return v
	}
	return def
}

// Render returns the zoo.cfg that the image's entrypoint writes for env,
// the container's environment, line for line in its order:
//
//	dataDir, dataLogDir, tickTime, initLimit, syncLimit,
//	autopurge.snapRetainCount, autopurge.purgeInterval, maxClientCnxns,
//	standaloneEnabled, admin.enableServer (ZOO_* or the Dockerfile defaults),
//	every word of ZOO_SERVERS (DefaultServers when unset or empty),
//	4lw.commands.whitelist (only when ZOO_4LW_COMMANDS_WHITELIST is not empty),
//	every word of ZOO_CFG_EXTRA.
//
// Words are split on white space, as the script's unquoted for loops do;
// glob characters are not expanded. A word of ZOO_CFG_EXTRA that starts
// with '#' or '!' is dropped, since zoo.cfg would read it as a comment.
//
// Unlike the image, which leaves every check to ZooKeeper, Render fails on a
// server.N word that ParseServer refuses, and on two words for one server
// ID (ZooKeeper would keep one of them, which one depending on hash order).
func Render(env map[string]string) (Config, error) {
	var c Config
	add := func(k, v string) { c.lines = append(c.lines, Line{Key: k, Value: v}) }
	add("dataDir", DataDir(env))
	add("dataLogDir", DataLogDir(env))
	add("tickTime", or(env, "ZOO_TICK_TIME", DefaultTickTime))
	add("initLimit", or(env, "ZOO_INIT_LIMIT", DefaultInitLimit))
	add("syncLimit", or(env, "ZOO_SYNC_LIMIT", DefaultSyncLimit))
	add("autopurge.snapRetainCount", or(env, "ZOO_AUTOPURGE_SNAPRETAINCOUNT", DefaultSnapRetainCount))
	add("autopurge.purgeInterval", or(env, "ZOO_AUTOPURGE_PURGEINTERVAL", DefaultPurgeInterval))
	add("maxClientCnxns", or(env, "ZOO_MAX_CLIENT_CNXNS", DefaultMaxClientCnxns))
	add("standaloneEnabled", or(env, "ZOO_STANDALONE_ENABLED", DefaultStandalone))
	add("admin.enableServer", or(env, "ZOO_ADMINSERVER_ENABLED", DefaultAdminServer))

	servers := env["ZOO_SERVERS"]
	if servers == "" {
		servers = DefaultServers
	}
	seen := map[int64]string{}
	for _, w := range strings.Fields(servers) {
		l := lineOf(w)
		if strings.HasPrefix(l.Key, "server.") {
			s, err := ParseServer(l.Key, l.Value)
			if err != nil {
				return Config{}, fmt.Errorf("zkconfig: ZOO_SERVERS: %w", err)
			}
			if prev, dup := seen[s.ID]; dup {
				return Config{}, fmt.Errorf("zkconfig: ZOO_SERVERS: server %d is given twice (%s and %s)", s.ID, prev, w)
			}
			seen[s.ID] = w
		}
		c.lines = append(c.lines, l)
	}
	if v := env["ZOO_4LW_COMMANDS_WHITELIST"]; v != "" {
		add("4lw.commands.whitelist", v)
	}
	for _, w := range strings.Fields(env["ZOO_CFG_EXTRA"]) {
		if strings.HasPrefix(w, "#") || strings.HasPrefix(w, "!") {
			continue
		}
		l := lineOf(w)
		if strings.HasPrefix(l.Key, "server.") {
			if _, err := ParseServer(l.Key, l.Value); err != nil {
				return Config{}, fmt.Errorf("zkconfig: ZOO_CFG_EXTRA: %w", err)
			}
		}
		c.lines = append(c.lines, l)
	}
	return c, nil
}

// lineOf splits a word (no white space) as java.util.Properties.load reads
// a line: the key ends at the first '=' or ':'; a word with neither is a
// key with an empty value. Backslash escapes are not interpreted.
func lineOf(w string) Line {
	if i := strings.IndexAny(w, "=:"); i >= 0 {
		return Line{Key: w[:i], Value: w[i+1:]}
	}
	return Line{Key: w}
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// MyID returns the server ID that the image writes to <dataDir>/myid when
// that file is absent: ZOO_MY_ID, or DefaultMyID when it is unset or empty.
// It fails for a value that is not a decimal number (ZooKeeper would fail
// to start reading it).
func MyID(env map[string]string) (int64, error) {
	v := env["ZOO_MY_ID"]
	if v == "" {
		v = DefaultMyID
	}
	id, err := ParseID(v)
	if err != nil {
		return 0, fmt.Errorf("zkconfig: ZOO_MY_ID: %w", err)
	}
	return id, nil
}

// ParseID parses a server ID, the contents of a myid file or the N of
// server.N: a decimal number that fits an int64 (a Java long).
func ParseID(s string) (int64, error) {
	if !digits.MatchString(s) {
		return 0, fmt.Errorf("server ID %q is not a decimal number", s)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("server ID %q: %w", s, err)
	}
	return id, nil
}
