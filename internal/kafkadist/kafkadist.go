package kafkadist

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DefaultVersion is the Kafka version that scripts/fetch-kafka.sh fetches
// when given none.
const DefaultVersion = "4.4.0"

// Main classes in the fetched jars.
const (
	// ServerClass runs a broker, a controller, or both: kafka.Kafka server.properties.
	ServerClass = "kafka.Kafka"
	// StorageToolClass formats a node's log dirs: kafka.tools.StorageTool format ...
	StorageToolClass = "kafka.tools.StorageTool"
	// ProducerPerfClass is kafka-producer-perf-test.
	ProducerPerfClass = "org.apache.kafka.tools.ProducerPerformance"
	// VerifiableProducerClass and VerifiableConsumerClass are
	// kafka-verifiable-producer.sh and kafka-verifiable-consumer.sh: the
	// clients of Kafka's own system tests, which print one JSON event per
	// line.
	VerifiableProducerClass = "org.apache.kafka.tools.VerifiableProducer"
	VerifiableConsumerClass = "org.apache.kafka.tools.VerifiableConsumer"
	// VerifiableShareConsumerClass is kafka-verifiable-share-consumer.sh,
	// a member of a share group (KIP-932: in Kafka 4.1 as a preview,
	// production-ready from 4.2).
	VerifiableShareConsumerClass = "org.apache.kafka.tools.VerifiableShareConsumer"
	// EndToEndLatencyClass is kafka-e2e-latency.
	EndToEndLatencyClass = "org.apache.kafka.tools.EndToEndLatency"
)

// ErrNotFetched is returned by Find when the jars of the asked version have
// not been fetched.
var ErrNotFetched = errors.New("kafkadist: Kafka jars not fetched")

//go:embed log4j2.properties
var brokerLog4j2 string

//go:embed tools-log4j2.properties
var toolsLog4j2 string

// BrokerLog4j2 returns the log4j2 config for brokers and controllers: INFO
// and above to stdout, with Kafka's per-request and per-partition loggers
// at WARN. It is kafkadist/log4j2.properties.
func BrokerLog4j2() string { return brokerLog4j2 }

// ToolsLog4j2 returns the log4j2 config for Kafka's command-line tools: WARN
// and above to stderr, so that a tool's results on stdout stay readable. It
// is kafkadist/tools-log4j2.properties.
func ToolsLog4j2() string { return toolsLog4j2 }

// Dist is one fetched Kafka version.
type Dist struct {
	Version string
	// LibsDir holds every runtime jar: .cache/kafka/<version>/libs.
	LibsDir string
}

// Classpath returns the java -cp argument that loads every jar of d.
func (d Dist) Classpath() string { return filepath.Join(d.LibsDir, "*") }

// SharedArchive returns the class-data-sharing archive that the fetch script
// recorded beside LibsDir (kafka.jsa), for java -XX:SharedArchiveFile, or ""
// if there is none. A JVM that cannot use it (another JVM build, or another
// classpath) warns and starts without it.
func (d Dist) SharedArchive() string {
	jsa := filepath.Join(filepath.Dir(d.LibsDir), "kafka.jsa")
	if _, err := os.Stat(jsa); err != nil {
		return ""
	}
	return jsa
}

// StorageArchive is SharedArchive's twin for Kafka's StorageTool
// (storage.jsa, recorded by the fetch script's format, as the image's build
// records its storage.jsa), or "" if there is none.
func (d Dist) StorageArchive() string {
	jsa := filepath.Join(filepath.Dir(d.LibsDir), "storage.jsa")
	if _, err := os.Stat(jsa); err != nil {
		return ""
	}
	return jsa
}

// LibsPath returns where scripts/fetch-kafka.sh puts the jars of version,
// relative to the repository root.
func LibsPath(version string) string {
	return filepath.Join(".cache", "kafka", version, "libs")
}

// Find looks for the jars of version in LibsPath(version), marked complete
// by the fetch script, under the current directory or the nearest parent
// that has them, so that tests of any package of the repository find the
// repository's cache.
func Find(version string) (Dist, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Dist{}, fmt.Errorf("kafkadist: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		libs := filepath.Join(dir, LibsPath(version))
		if _, err := os.Stat(filepath.Join(libs, ".complete")); err == nil {
			return Dist{Version: version, LibsDir: libs}, nil
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return Dist{}, fmt.Errorf("%w: no complete %s in %s or any parent; run `make kafka-dist` (bash scripts/fetch-kafka.sh %s) at the repository root",
		ErrNotFetched, LibsPath(version), wd, version)
}

// Open returns the jars in libsDir, which must hold the fetch script's
// .complete mark.
func Open(version, libsDir string) (Dist, error) {
	if _, err := os.Stat(filepath.Join(libsDir, ".complete")); err != nil {
		return Dist{}, fmt.Errorf("%w: %s is not a complete fetch (%w); run `bash scripts/fetch-kafka.sh %s`", ErrNotFetched, libsDir, err, version)
	}
	return Dist{Version: version, LibsDir: libsDir}, nil
}
