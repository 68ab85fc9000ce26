package kubelet

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// ZooKeeperImage is the official Docker Hub ZooKeeper image; its tag is
// the ZooKeeper version.
const ZooKeeperImage = "zookeeper"

// zooKeeperTag returns the tag of an official zookeeper image, however its
// repository is spelled, and false for any other image.
func zooKeeperTag(image string) (string, bool) {
	repo, tag := manifests.SplitImage(image)
	switch repo {
	case ZooKeeperImage, "library/" + ZooKeeperImage, "docker.io/" + ZooKeeperImage, "docker.io/library/" + ZooKeeperImage:
		return tag, true
	}
	return "", false
}

// zooKeeperLookup returns the runtime of a zookeeper image with tag: the
// fetched jars of a Kafka version that ships that ZooKeeper version (the
// 3.9.x line ships 3.8.4, the version "latest" and no tag run here), the
// pinned Kafka jars (--kafka-libs) first if they hold it. Jars that are not
// fetched get a message naming the command that fetches them, as a
// waiting reason.
func (r runtimes) zooKeeperLookup(image, tag string) (runtime, string) {
	version := kafkadist.ZooKeeperVersionOfTag(tag)
	if r.kafkaLibs != "" {
		if _, err := os.Stat(filepath.Join(r.kafkaLibs, kafkadist.ZooKeeperJar(version))); err == nil {
			return zooKeeperRuntime{node: r.node, libs: r.kafkaLibs}, ""
		}
	}
	if r.kafkaCache == "" {
		return nil, fmt.Sprintf("image %q needs the ZooKeeper %s jars, which the Kafka 3.9.x line ships: run `%s`, then `kafkachaos cluster up` from the repository",
			image, version, kafkadist.FetchCommand(kafkadist.ZooKeeperKafkaVersion))
	}
	libs, err := kafkadist.ZooKeeperIn(r.kafkaCache, version)
	if err != nil {
		return nil, fmt.Sprintf("image %q: %v", image, err)
	}
	return zooKeeperRuntime{node: r.node, libs: libs}, ""
}

// zooKeeperRuntime runs a ZooKeeper server as the official zookeeper image
// does: `kafkachaos-node zookeeper-run` renders the ZOO_* env into
// zoo.cfg, writes myid on first start, and execs the JVM. The container's
// command and args are ignored, as the image's zkServer.sh
// start-foreground would be run. Each of its volumes' mountPaths is passed
// as a --mount, so that zookeeper-run keeps the data dirs in volumes and
// never in a host directory that the pod's mount namespace shows.
type zooKeeperRuntime struct{ node, libs string }

func (z zooKeeperRuntime) command(c corev1.Container) (string, []string, error) {
	args := []string{"zookeeper-run", "--libs", z.libs}
	for _, vm := range c.VolumeMounts {
		args = append(args, "--mount", vm.MountPath)
	}
	return z.node, args, nil
}
