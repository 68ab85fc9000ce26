package kafkadist

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The Kafka 3.9.x line runs ZooKeeper mode from ZooKeeper's own jars, which
// scripts/fetch-kafka.sh fetches with it (-Dzookeeper.version=3.8.4), so the
// fetched jars of a 3.9.x Kafka can also run a ZooKeeper server:
// org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg, as Kafka's
// bin/zookeeper-server-start.sh does.
const (
	// DefaultZooKeeperVersion is the ZooKeeper version that the fetched
	// 3.9.x jars hold, and the one an official zookeeper image with no tag
	// or with "latest" runs on the local cluster (where the image's latest
	// is newer, but no fetched jars hold it).
	DefaultZooKeeperVersion = "3.8.4"
	// ZooKeeperKafkaVersion is the Kafka version to fetch for
	// DefaultZooKeeperVersion's jars.
	ZooKeeperKafkaVersion = "3.9.2"
	// ZooKeeperServerClass runs a ZooKeeper server, standalone or in an
	// ensemble as zoo.cfg says: QuorumPeerMain zoo.cfg.
	ZooKeeperServerClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// ZooKeeperJar returns the file name of the ZooKeeper server jar of
// version: zookeeper-3.8.4.jar.
func ZooKeeperJar(version string) string { return "zookeeper-" + version + ".jar" }

// ZooKeeperVersionOfTag returns the ZooKeeper version an official zookeeper
// image tag names: DefaultZooKeeperVersion for "latest" and no tag, the
// tag's X.Y.Z for a JRE variant (3.8.4-jre-17: the JRE is the host's
// here), and the tag itself otherwise.
func ZooKeeperVersionOfTag(tag string) string {
	tag = strings.TrimSpace(tag)
	if tag == "" || tag == "latest" {
		return DefaultZooKeeperVersion
	}
	if v, _, ok := strings.Cut(tag, "-jre"); ok && versionRE.MatchString(v) {
		return v
	}
	return tag
}

// ZooKeeperIn returns the libs dir of a complete fetch in cache (a
// CacheDir) that holds ZooKeeper version's jar, the newest Kafka version's
// when several do. The error, wrapping ErrNotFetched, says which command
// fetches them, or that no line the project fetches ships that version.
func ZooKeeperIn(cache, version string) (string, error) {
	if !versionRE.MatchString(version) {
		return "", fmt.Errorf("%w: ZooKeeper %q: want a release version X.Y.Z", ErrNotFetched, version)
	}
	entries, err := os.ReadDir(cache)
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("kafkadist: %w", err)
	}
	best, bestLibs := "", ""
	for _, e := range entries {
		kafka := e.Name()
		if !e.IsDir() || !versionRE.MatchString(kafka) {
			continue
		}
		libs := filepath.Join(cache, kafka, "libs")
		if _, err := os.Stat(filepath.Join(libs, ".complete")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(libs, ZooKeeperJar(version))); err != nil {
			continue
		}
		if best == "" || CompareVersions(kafka, best) > 0 {
			best, bestLibs = kafka, libs
		}
	}
	if bestLibs != "" {
		return bestLibs, nil
	}
	if version != DefaultZooKeeperVersion {
		return "", fmt.Errorf("%w: no fetched Kafka in %s holds %s, and no Kafka line the project fetches ships ZooKeeper %s: use ZooKeeper %s, which `%s` fetches",
			ErrNotFetched, cache, ZooKeeperJar(version), version, DefaultZooKeeperVersion, FetchCommand(ZooKeeperKafkaVersion))
	}
	return "", fmt.Errorf("%w: no fetched Kafka in %s holds %s; run `%s` at the repository root (the Kafka 3.9.x line ships ZooKeeper %s)",
		ErrNotFetched, cache, ZooKeeperJar(version), FetchCommand(ZooKeeperKafkaVersion), DefaultZooKeeperVersion)
}
