package kafkadist

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

//go:embed log4j.properties
var brokerLog4j string

//go:embed tools-log4j.properties
var toolsLog4j string

// ErrUnknownLine is returned for a Kafka version that no row of the
// versions table (scripts/fetch-kafka.sh, LineOf) knows how to run.
var ErrUnknownLine = errors.New("kafkadist: no known Kafka line")

// Line is a Kafka release line that scripts/fetch-kafka.sh fetches and
// the launchers know how to run: 4.x (log4j2), and 3.7.x, 3.8.x and 3.9.x
// (log4j 1, as reload4j). Keep it in step with the script's versions table.
type Line struct {
	// Name is "4.x", "3.7.x", "3.8.x" or "3.9.x".
	Name string
	// Log4j2 is true when the line's JVMs take a log4j2 config
	// (-Dlog4j2.configurationFile), false for log4j 1
	// (-Dlog4j.configuration=file:...).
	Log4j2 bool
}

var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

// LineOf returns the line of version ("4.3.2"), or ErrUnknownLine.
func LineOf(version string) (Line, error) {
	m := versionRE.FindStringSubmatch(version)
	if m == nil {
		return Line{}, fmt.Errorf("%w for %q: want a release version X.Y.Z", ErrUnknownLine, version)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	switch {
	case major == 4:
		return Line{Name: "4.x", Log4j2: true}, nil
	case major == 3 && minor >= 7 && minor <= 9:
		return Line{Name: fmt.Sprintf("3.%d.x", minor)}, nil
	}
	return Line{}, fmt.Errorf("%w for %s: the known lines are 4.x and 3.7.x to 3.9.x (3.7 is the first with an apache/kafka image)", ErrUnknownLine, version)
}

// Logging is a broker's logging config for one line: the file to write,
// its contents, and the JVM option that names it.
type Logging struct {
	File    string // log4j2.properties or log4j.properties
	Content string
	line    Line
}

// BrokerLogging returns the broker logging config of line l: INFO to
// stdout, with Kafka's per-request and per-partition loggers at WARN.
func (l Line) BrokerLogging() Logging {
	if l.Log4j2 {
		return Logging{File: "log4j2.properties", Content: brokerLog4j2, line: l}
	}
	return Logging{File: "log4j.properties", Content: brokerLog4j, line: l}
}

// ToolsLogging returns the logging config of line l's command-line
// tools: WARN and above, to stderr.
func (l Line) ToolsLogging() Logging {
	if l.Log4j2 {
		return Logging{File: "tools-log4j2.properties", Content: toolsLog4j2, line: l}
	}
	return Logging{File: "tools-log4j.properties", Content: toolsLog4j, line: l}
}

// JVMOption returns the system property that points the JVM at the config
// written to path.
func (g Logging) JVMOption(path string) string {
	if g.line.Log4j2 {
		return "-Dlog4j2.configurationFile=" + path
	}
	return "-Dlog4j.configuration=file:" + path
}

// FetchCommand is the command that fetches version's jars, for messages.
func FetchCommand(version string) string {
	return "make kafka-dist KAFKA_VERSION=" + version
}

// CacheDir returns the directory that holds every fetched version
// (.cache/kafka) under the current directory or its nearest parent that
// has one, or "" if none does.
func CacheDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		c := filepath.Join(dir, ".cache", "kafka")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// InCache returns version's jars in cache (a CacheDir), which must be of a
// known line and fetched completely; the error says which command fetches
// them.
func InCache(cache, version string) (Dist, error) {
	if _, err := LineOf(version); err != nil {
		return Dist{}, err
	}
	libs := filepath.Join(cache, version, "libs")
	if _, err := os.Stat(filepath.Join(libs, ".complete")); err != nil {
		return Dist{}, fmt.Errorf("%w: Kafka %s is not in %s; run `%s` at the repository root", ErrNotFetched, version, cache, FetchCommand(version))
	}
	return Dist{Version: version, LibsDir: libs}, nil
}

// VersionOfTag returns the Kafka version an apache/kafka image tag names:
// the tag itself, or DefaultVersion for "latest" and no tag. Tags with a
// suffix (4.4.0-rc1) name no fetched release.
func VersionOfTag(tag string) string {
	tag = strings.TrimSpace(tag)
	if tag == "" || tag == "latest" {
		return DefaultVersion
	}
	return tag
}

// CompareVersions compares two release versions X.Y.Z (checked with LineOf
// first) number by number: -1, 0 or +1.
func CompareVersions(a, b string) int {
	pa, pb := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	for i := 1; i <= 3 && pa != nil && pb != nil; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// Line returns d's line (see LineOf).
func (d Dist) Line() (Line, error) { return LineOf(d.Version) }

// OpenLibs returns the jars in libsDir, a complete fetch, with the version
// the fetch script recorded in its .complete mark.
func OpenLibs(libsDir string) (Dist, error) {
	raw, err := os.ReadFile(filepath.Join(libsDir, ".complete"))
	if err != nil {
		return Dist{}, fmt.Errorf("%w: %s is not a complete fetch (%w); run `make kafka-dist`", ErrNotFetched, libsDir, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "kafka.version="); ok {
			return Dist{Version: strings.TrimSpace(v), LibsDir: libsDir}, nil
		}
	}
	return Dist{}, fmt.Errorf("%w: %s/.complete names no kafka.version", ErrNotFetched, libsDir)
}

// WithLevels is g with the levels the image's launcher takes from env
// (KafkaDockerWrapper): root, when set (KAFKA_LOG4J_ROOT_LOGLEVEL), for the
// root logger, and loggers (KAFKA_LOG4J_LOGGERS, "name=LEVEL,...") for
// the named loggers, over g's own levels. As the wrapper does for log4j 1,
// an entry is written as it is given (one without "=" names a logger with
// no level, which log4j ignores); a log4j2 config has no such line, and
// the entry is left out.
func (g Logging) WithLevels(root, loggers string) Logging {
	var add []string
	if root = strings.TrimSpace(root); root != "" {
		if g.line.Log4j2 {
			add = append(add, "rootLogger.level = "+root)
		} else {
			add = append(add, "log4j.rootLogger="+root+", stdout")
		}
	}
	added := map[string]string{} // log4j2 logger name -> its key
	for i, entry := range strings.Split(loggers, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		if !g.line.Log4j2 {
			add = append(add, "log4j.logger."+entry)
			continue
		}
		name, level, ok := strings.Cut(entry, "=")
		name, level = strings.TrimSpace(name), strings.TrimSpace(level)
		if !ok || name == "" || level == "" {
			continue
		}
		// A log4j2 logger is a key of its own: set the level of the one
		// that names this logger already, or add one.
		key := g.log4j2LoggerKey(name)
		if key == "" {
			key = added[name]
		}
		if key == "" {
			key = fmt.Sprintf("kafkachaos%d", i)
			added[name] = key
			add = append(add, fmt.Sprintf("logger.%s.name = %s", key, name))
		}
		add = append(add, fmt.Sprintf("logger.%s.level = %s", key, level))
	}
	if len(add) == 0 {
		return g
	}
	// Later keys win, as in the wrapper's appended lines.
	g.Content = strings.TrimRight(g.Content, "\n") + "\n\n# From KAFKA_LOG4J_ROOT_LOGLEVEL and KAFKA_LOG4J_LOGGERS, as the image's launcher adds them.\n" + strings.Join(add, "\n") + "\n"
	return g
}

// log4j2LoggerKey returns the key K of the "logger.K.name = name" line of
// g's log4j2 config, or "".
func (g Logging) log4j2LoggerKey(name string) string {
	for _, line := range strings.Split(g.Content, "\n") {
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if ok && v == name && strings.HasPrefix(k, "logger.") && strings.HasSuffix(k, ".name") {
			return strings.TrimSuffix(strings.TrimPrefix(k, "logger."), ".name")
		}
	}
	return ""
}
