package kubelet

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// A runtime turns a container of a given image into a host command.
type runtime interface {
	// command returns the program and arguments to run.
	command(c corev1.Container) (path string, args []string, err error)
}

// runtimes maps image repositories (without tag) to local runtimes.
type runtimes struct {
	node       string            // path of the kafkachaos-node binary (pod-exec and the launchers)
	cli        string            // path of the kafkachaos binary the project's image runs; "" if none was found
	kafkaLibs  string            // jars every apache/kafka image runs, whatever its tag; "" to go by the tag
	kafkaCache string            // the fetched versions (.cache/kafka), by tag; "" if none
	extra      map[string]string // image repository -> host program
}

// errNoRuntime is the waiting reason of a container whose image has no
// local runtime, as ErrImagePull is on a real node.
const errNoRuntime = "ErrImagePull"

// lookup returns the runtime for image, or a message saying why there is
// none.
func (r runtimes) lookup(image string) (runtime, string) {
	repo, _ := manifests.SplitImage(image)
	switch repo {
	case nodeagent.AgentImage, "kafkachaos/kafkachaos":
		if r.cli == "" {
			return nil, fmt.Sprintf("image %q runs the kafkachaos binary, and the node agent found none next to %s or on PATH: run `make build`, which puts both in bin/", image, r.node)
		}
		return selfRuntime{path: r.cli}, ""
	}
	if tag, ok := manifests.KafkaTag(image); ok {
		return r.kafkaLookup(image, tag)
	}
	if tag, ok := zooKeeperTag(image); ok {
		return r.zooKeeperLookup(image, tag)
	}
	if IsPauseImage(image) {
		return pauseRuntime{}, ""
	}
	if path, ok := r.extra[repo]; ok {
		return hostRuntime{path: path}, ""
	}
	return nil, fmt.Sprintf("image %q has no local runtime on this cluster; known images: %s (runs kafkachaos), apache/kafka (runs the fetched Kafka jars), %s (runs the ZooKeeper jars fetched with Kafka 3.9.x), a pause image (registry.k8s.io/pause: sleeps)", image, nodeagent.AgentImage, ZooKeeperImage)
}

// selfRuntime runs the kafkachaos binary with the container's args. Its
// command, if any, must name kafkachaos.
type selfRuntime struct{ path string }

func (s selfRuntime) command(c corev1.Container) (string, []string, error) {
	args := append([]string(nil), c.Args...)
	if len(c.Command) > 0 {
		if !strings.HasSuffix(c.Command[0], "kafkachaos") {
			return "", nil, fmt.Errorf("the kafkachaos image runs only kafkachaos, not %q", c.Command[0])
		}
		args = append(append([]string(nil), c.Command[1:]...), args...)
	}
	return s.path, args, nil
}

// hostRuntime runs a host program for an image mapped to it with
// Config.Images: the container's command is replaced by the program, its
// args are kept.
type hostRuntime struct{ path string }

func (h hostRuntime) command(c corev1.Container) (string, []string, error) {
	args := append([]string(nil), c.Args...)
	if len(c.Command) > 1 {
		args = append(append([]string(nil), c.Command[1:]...), args...)
	}
	return h.path, args, nil
}
